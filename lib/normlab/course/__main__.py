"""Command line: `python -m normlab.course {grade,rerun,report} <assignment> ...`.

Run from an nbgrader course root (the cwd); the course's `nbgrader_config.py` applies.

    python -m normlab.course grade ps2_layer_norm --jobs 4        # every submission
    python -m normlab.course grade ps2_layer_norm --force          # regrade the graded ones too
    python -m normlab.course grade ps2_layer_norm --shard 0/4      # part 0 of 4 (of 0..3)
    python -m normlab.course rerun ps2_layer_norm alice bob        # just these students, again
    python -m normlab.course report ps2_layer_norm                 # CSV + bar chart
    python -m normlab.course export --out grades-per-student.csv   # a row per student
    python -m normlab.course export --out g.csv --lms canvas       # as Canvas (or moodle) imports
    python -m normlab.course points                                # source notebooks follow CHECKS
    python -m normlab.course variant ps1_by_hand --student alice   # her numbers and answers
    python -m normlab.course student-source DIR                    # the student download's source
    python -m normlab.course student-bundle DIR                    # its zip: wheel, notebooks

`make grade A=<assignment> JOBS=<n>`, `make report A=<assignment>` and `make export` wrap them;
`make student` wraps the last two, around `python -m build` (see `download`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# jsonschema (imported by nbformat) also imports rfc3987_syntax when it is installed, only to
# offer an "iri" format check that neither nbformat nor nbgrader uses; building its grammar
# costs about 1.5 s of CPU per run. This process leaves it out.
sys.modules.setdefault("rfc3987_syntax", None)

from .grader.isolation import DEFAULT_UID_BASE, GIB, Limits  # noqa: E402


def _shard(text: str):
    from .grader.class_run import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m normlab.course",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde every submission, in parallel")
    rerun = commands.add_parser("rerun", help="autograde these students again")
    for sub in (grade, rerun):
        sub.add_argument("assignment")
        sub.add_argument(
            "--jobs",
            "-j",
            type=int,
            default=os.cpu_count() or 2,
            help="parallel workers (default: the number of CPUs)",
        )
        sub.add_argument(
            "--isolation",
            choices=["auto", "strict", "basic"],
            default="auto",
            help="strict: each kernel in a bubblewrap sandbox (needs bwrap and user namespaces, "
            "or root); auto (default): strict, refusing to grade where it is not possible; "
            "basic: limits only, the kernels can read what this user can (ask for it knowingly)",
        )
        sub.add_argument(
            "--memory-gib",
            type=float,
            default=2.0,
            help="address-space limit of a kernel, GiB (default 2)",
        )
        sub.add_argument(
            "--cpu-seconds",
            type=int,
            default=600,
            help="CPU-time limit of a kernel, seconds (default 600)",
        )
        sub.add_argument(
            "--uid-base",
            type=int,
            default=DEFAULT_UID_BASE,
            help="first kernel uid when root grades under strict isolation, one per job "
            f"(default {DEFAULT_UID_BASE})",
        )
        sub.add_argument("--no-progress", action="store_true", help="no progress bar")
    rerun.add_argument("students", nargs="+", metavar="STUDENT")
    grade.add_argument(
        "--force", action="store_true", help="regrade submissions that are already autograded"
    )
    grade.add_argument(
        "--shard",
        metavar="K/N",
        type=_shard,
        help="grade only part K of N of the class (K = 0..N-1, stable by student id), so N "
        "graders share it: a Slurm array's SLURM_ARRAY_TASK_ID, a Kubernetes JOB_COMPLETION_INDEX",
    )
    report = commands.add_parser("report", help="class report: CSV and bar chart")
    report.add_argument("assignment")
    report.add_argument("--output", help="folder for the files (default reports/<assignment>)")
    export = commands.add_parser(
        "export", help="grades: a row per student, a column per assignment"
    )
    export.add_argument("--out", required=True, metavar="FILE.csv", help="the CSV to write")
    export.add_argument(
        "--per-check", action="store_true", help="also a column per autograded check"
    )
    export.add_argument(
        "--lms",
        choices=["canvas", "moodle"],
        help="the layout that LMS's grade import reads as it is (no total: it adds its own)",
    )
    export.add_argument(
        "--missing",
        choices=["blank", "zero"],
        default="blank",
        help="a missing submission: blank (no grade; the default) or 0 points",
    )
    commands.add_parser(
        "points", help="write each check's points (its CheckSpec) into the source notebooks"
    )
    variant = commands.add_parser(
        "variant", help="a student's own variant of an assignment, and its answers, as JSON"
    )
    variant.add_argument("assignment")
    variant.add_argument("--student", required=True, help="the student's id, as nbgrader's")
    source = commands.add_parser(
        "student-source", help="write the student download's source tree (then python -m build)"
    )
    source.add_argument("folder", metavar="DIR", help="the folder to write (emptied first)")
    bundle = commands.add_parser(
        "student-bundle", help="zip the wheel in DIR with the released notebooks and a README"
    )
    bundle.add_argument("folder", metavar="DIR", help="the folder holding the wheel")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "points":
        from .grader.nbgrader_app import load_app
        from .plugins import NormlabGrading
        from .reports.points import sync_course

        app = load_app()
        source = Path(app.coursedir.root) / app.coursedir.source_directory
        for path in sync_course(source, NormlabGrading(config=app.config).reuse_voids):
            print(f"points updated: {path}")
        return 0
    if args.command == "variant":
        import json

        from .variant import describe

        try:
            print(json.dumps(describe(args.assignment, args.student), indent=1))
        except ValueError as exc:
            print(f"python -m normlab.course variant: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command in ("student-source", "student-bundle"):
        from .download import source

        write = source.write_source if args.command == "student-source" else source.write_bundle
        print(write(Path(args.folder)))
        return 0
    if args.command == "export":
        from .reports.export import write_export

        print(write_export(args.out, args.per_check, args.lms, args.missing))
        return 0
    if args.command == "report":
        from .reports.class_report import write_report

        for path in write_report(args.assignment, args.output):
            print(path)
        return 0
    from .grader.class_run import grade

    limits = Limits(memory_bytes=int(args.memory_gib * GIB), cpu_seconds=args.cpu_seconds)
    summary = grade(
        args.assignment,
        jobs=args.jobs,
        force=args.command == "rerun" or args.force,
        students=args.students if args.command == "rerun" else None,
        isolation=args.isolation,
        limits=limits,
        uid_base=args.uid_base,
        progress=not args.no_progress,
        shard=getattr(args, "shard", None),
    )
    part = f" (shard {summary['shard']})" if summary["shard"] else ""
    print(
        f"{summary['assignment']}{part}: {summary['graded']} graded, {len(summary['failed'])} "
        f"failed, {len(summary['skipped'])} skipped (already autograded; --force regrades) in "
        f"{summary['seconds']:.1f} s with {summary['jobs']} job(s), {summary['isolation']} "
        "isolation"
    )
    for student in summary["failed"]:
        print(
            f"  failed: {student} (see reports/{summary['assignment']}/grading-run.json)",
            file=sys.stderr,
        )
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
