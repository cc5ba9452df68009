"""The package as the index would take it (pick-a-method is not published yet): `python -m build --no-isolation`
makes the sdist and, from it, the wheel, offline; the wheel's metadata is what `twine check` and the index read
(it validates, the README is its markdown description, the classifiers, extras and entry point are pyproject's,
the skill and the license travel inside). And the [torch] hint a light install prints is runnable as printed."""

import importlib.metadata
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.metadata import Metadata
from packaging.requirements import Requirement

from pick_a_method.server import extras

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the build backend (setuptools) from this environment, nothing fetched; `build` is in [test].
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    stem = f"pick_a_method-{PROJECT['version']}"
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}-py3-none-any.whl", f"{stem}.tar.gz"]
    return out / f"{stem}-py3-none-any.whl", out / f"{stem}.tar.gz"


def _metadata(raw: bytes) -> Metadata:
    return Metadata.from_email(raw, validate=True)  # raises on a field the index would refuse


def test_the_wheel_metadata_is_what_the_index_reads(dist):
    wheel, _ = dist
    with zipfile.ZipFile(wheel) as z:
        info = f"pick_a_method-{PROJECT['version']}.dist-info"
        raw = z.read(f"{info}/METADATA")
        entry_points = z.read(f"{info}/entry_points.txt").decode()
        skill = z.read("pick_a_method/skill/SKILL.md").decode()
        licence = z.read(f"{info}/licenses/LICENSE").decode()
    meta = _metadata(raw)
    assert (meta.name, str(meta.version)) == (PROJECT["name"], PROJECT["version"])
    assert meta.summary == PROJECT["description"] and str(meta.requires_python) == PROJECT["requires-python"]
    assert meta.license_expression == PROJECT["license"] and meta.license_files == ["LICENSE"]
    assert licence == (REPO / "LICENSE").read_text() and "Apache License" in licence
    # the README as the project page: markdown, whole
    assert meta.description_content_type == "text/markdown"
    assert meta.description.strip() == (REPO / "README.md").read_text().strip()
    assert meta.classifiers == PROJECT["classifiers"] and all(c.count(" :: ") >= 1 for c in meta.classifiers)
    assert meta.keywords == PROJECT["keywords"] and meta.author == PROJECT["authors"][0]["name"]
    assert {str(r) for r in meta.requires_dist if r.marker is None} == {str(Requirement(d))
                                                                         for d in PROJECT["dependencies"]}
    assert set(meta.provides_extra) == set(PROJECT["optional-dependencies"])
    assert skill == (REPO / "skill" / "SKILL.md").read_text()
    assert "pick-a-method = pick_a_method.server.cli:main" in entry_points.splitlines()


def test_the_sdist_carries_the_same_metadata_and_the_license(dist):
    wheel, sdist = dist
    stem = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as t:
        names = set(t.getnames())
        pkg_info = t.extractfile(f"{stem}/PKG-INFO").read()
    assert {f"{stem}/{f}" for f in ("LICENSE", "README.md", "pyproject.toml", "skill/SKILL.md")} <= names
    meta = _metadata(pkg_info)
    assert (meta.name, str(meta.version), meta.description_content_type) == (PROJECT["name"], PROJECT["version"],
                                                                            "text/markdown")


def test_the_torch_hint_installs_the_extras_ranges_into_this_environment():
    """The hint names the [torch] extra's packages at pyproject's ranges (not `pick-a-method[torch]`, which no index
    has), PyTorch's CPU index, and a pip that installs into the environment the server runs in."""
    line = extras.torch_install()
    assert list(extras.TORCH_SPECS) == PROJECT["optional-dependencies"]["torch"]
    assert list(extras.PLOT_SPECS) == PROJECT["optional-dependencies"]["plot"]
    # the interpreter's path may hold the name (CI's virtualenv is /tmp/pick-a-method-ci.*): the extra is what's not
    assert "pick-a-method[" not in line.replace(sys.executable, "")
    assert line.endswith(f"--extra-index-url {extras.CPU_INDEX}")
    words = line.split()
    assert words[0] == sys.executable or (words[:4] == ["uv", "pip", "install", "--python"]
                                          and words[4] == sys.executable)
    if words[0] == sys.executable:  # its pip answers, so the line runs as printed
        pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, timeout=60)
        assert pip.returncode == 0 and pip.stdout.startswith("pip ")
    with pytest.raises(extras.MissingExtra) as e:
        extras.require("no_such_module_for_the_test", "the check")
    assert line in str(e.value) and "[torch]" in str(e.value)


def test_the_installed_entry_point_is_the_wheels():
    installed = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "pick-a-method"]
    assert [e.value for e in installed] == ["pick_a_method.server.cli:main"]
