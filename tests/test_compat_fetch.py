"""compat/fetch.py builds the corpus from local copies of the repositories (``--from-mirror``),
without network: the pinned commit checked out, a file whose contents the copy lacks left out
and named, the tutorials' single files read from their commits."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'compat'))
import fetch  # noqa: E402  compat/fetch.py


def _git(*args, cwd):
    return subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@example.com', *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo, files):
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(repo, path)) or repo, exist_ok=True)
        with open(os.path.join(repo, path), 'w') as f:
            f.write(text)
    _git('add', '-A', cwd=repo)
    _git('commit', '-q', '-m', 'c', cwd=repo)
    return _git('rev-parse', 'HEAD', cwd=repo)


@pytest.fixture
def mirror(tmp_path):
    examples = tmp_path / 'mirror' / 'a+examples' / 'repo'
    examples.mkdir(parents=True)
    _git('init', '-q', cwd=examples)
    pinned = _commit(examples, {'LICENSE': 'BSD\n', 'ex/main.py': 'print(1)\n', 'ex/data/big.txt': 'big\n'})
    _commit(examples, {'ex/main.py': 'print(2)\n'})  # a later commit: the pinned one is checked out
    big = _git('rev-parse', f'{pinned}:ex/data/big.txt', cwd=examples)
    os.remove(examples / '.git' / 'objects' / big[:2] / big[2:])  # a snapshot without its largest file
    tutorials = tmp_path / 'mirror' / 'pytorch+tutorials' / 'repo'
    tutorials.mkdir(parents=True)
    _git('init', '-q', cwd=tutorials)
    first = _commit(tutorials, {'src/t.py': 'x = 1\n'})
    _commit(tutorials, {'src/t.py': 'x = 2\n'})
    return tmp_path / 'mirror', pinned, first


def test_fetch_from_a_mirror_checks_out_the_pinned_commit_without_the_absent_files(mirror, tmp_path, monkeypatch,
                                                                                  capsys):
    folder, pinned, first = mirror
    monkeypatch.setattr(fetch, 'REPOSITORIES', {'a+examples': ('https://example.invalid/a/examples', pinned, 'MIT')})
    monkeypatch.setattr(fetch, 'TUTORIALS', [('src/t.py', first)])
    target = tmp_path / 'corpus'
    fetch.main([str(target), '--from-mirror', str(folder)])
    repo = target / 'a+examples'
    assert _git('rev-parse', 'HEAD', cwd=repo) == pinned
    assert (repo / 'ex' / 'main.py').read_text() == 'print(1)\n'
    assert (repo / 'LICENSE').read_text() == 'BSD\n'
    assert not (repo / 'ex' / 'data' / 'big.txt').exists()
    assert 'a+examples: ex/data/big.txt is not in the mirror; left out' in capsys.readouterr().err
    assert (target / 'pytorch+tutorials' / 'src' / 't.py').read_text() == 'x = 1\n'
    fetch.fetch(str(target), str(folder))  # a second run keeps what is there
    assert _git('rev-parse', 'HEAD', cwd=repo) == pinned
