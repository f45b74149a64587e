"""Build the corpus folder that ``compat/run.py`` reads: public repositories at pinned commits.

    python compat/fetch.py [DIR]          (default: compat/corpus, which git ignores)

The programs are other people's code under their own licences (listed below and kept beside
each copy); leafgrad's repository keeps only this list and how to run them. Needs git and
network access to github.com.
"""
import os
import subprocess
import sys
import urllib.request

REPOSITORIES = {
    # folder: (repository, commit, licence)
    'pytorch+examples': ('https://github.com/pytorch/examples', '77f55b912142e11fcfdf5b530231fb9c52f181e8',
                         'BSD-3-Clause'),
    'karpathy+nanoGPT': ('https://github.com/karpathy/nanoGPT', '3adf61e154c3fe3fca428ad6bc3818b27a3b8291', 'MIT'),
    'karpathy+minGPT': ('https://github.com/karpathy/minGPT', '37baab71b9abea1b76ab957409a1cc2fbfba8a26', 'MIT'),
}

# single files of pytorch/tutorials (BSD-3-Clause), a repository too large to clone for them
TUTORIALS_COMMIT = 'main'
TUTORIALS = []


def fetch(target):
    os.makedirs(target, exist_ok=True)
    for folder, (url, commit, _licence) in REPOSITORIES.items():
        dest = os.path.join(target, folder)
        if not os.path.isdir(dest):
            subprocess.run(['git', 'clone', '--quiet', url, dest], check=True)
        subprocess.run(['git', '-C', dest, 'checkout', '--quiet', commit], check=True)
    for path in TUTORIALS:
        dest = os.path.join(target, 'pytorch+tutorials', path)
        if os.path.exists(dest):
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        raw = f'https://raw.githubusercontent.com/pytorch/tutorials/{TUTORIALS_COMMIT}/{path}'
        urllib.request.urlretrieve(raw, dest)
    licence = os.path.join(target, 'pytorch+tutorials', 'LICENSE')
    if TUTORIALS and not os.path.exists(licence):
        urllib.request.urlretrieve(f'https://raw.githubusercontent.com/pytorch/tutorials/{TUTORIALS_COMMIT}/LICENSE',
                                   licence)


if __name__ == '__main__':
    fetch(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus'))
