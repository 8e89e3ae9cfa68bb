"""Build hook (the project's metadata is in pyproject.toml): a wheel carries the data files the
runtime reads from outside ``wizard/`` -- ``presets/`` and the rule case files ``tests/rules/*.yml``
-- as package data under ``wizard/_shipped/<same path>`` (read through :mod:`wizard.shipped`).
Each file exists once in the repository; an editable install reads them where they are."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent

#: (folder of the repository, glob): the files copied into ``wizard/_shipped/`` (keep MANIFEST.in in step)
SHIPPED = (("presets", "**/*.yaml"), ("presets", "**/*.md"), ("tests/rules", "*.yml"))


class BuildPyWithShippedData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # the checkout's own files are read in place
            return
        for folder, pattern in SHIPPED:
            for src in sorted((ROOT / folder).glob(pattern)):
                if src.is_file():
                    dst = Path(self.build_lib) / "wizard" / "_shipped" / src.relative_to(ROOT)
                    self.mkpath(str(dst.parent))
                    self.copy_file(str(src), str(dst))


setup(cmdclass={"build_py": BuildPyWithShippedData})
