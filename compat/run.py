"""Run real PyTorch programs on PyTorch and on leafgrad and compare what they print.

    python compat/run.py --corpus DIR [NAME ...] [--json out.json] [--timeout S]

Each program of ``compat/programs.py`` is copied from the corpus directory (built by
``compat/fetch.py``) into a fresh temporary folder and run twice from there: with PyTorch
(``python script.py``) and with leafgrad (``python -m leafgrad script.py``). The two outputs
(stdout and stderr, the commands' exit status) are normalised — leafgrad's name read as torch's,
timings and addresses masked — and compared line by line, numbers within the program's
tolerance. A program whose two runs raise the same error counts as agreeing: leafgrad promises
PyTorch's errors too.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from programs import PROGRAMS  # noqa: E402

_NUMBER = re.compile(r'[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?')
_NON_FINITE = re.compile(r'[-+]?\b(?:nan|inf)\b')  # (what an unseeded or uninitialised value may also print)
_ADDRESS = re.compile(r'0x[0-9a-fA-F]+')
_CACHE_FORMAT = 2  # what a kept run holds (stdout, then the error line of a failed command)


def normalise(text, program):
    """What the comparison reads: leafgrad's name as torch's, volatile parts masked.

    For an unseeded program every number (nan and inf too: torch.empty's memory may print them)
    reads '#' and, since a tensor's printed width (signs,
    digits) and so its line breaks follow its values, a line continued on indented lines is one
    line, compared without its spaces."""
    text = text.replace('leafgrad', 'torch')
    text = _ADDRESS.sub('0x?', text)
    for pattern in program.get('mask', ()):
        text = re.sub(pattern, '<masked>', text)
    lines = [line.rstrip() for line in text.splitlines()]
    lines = [line for line in lines if line and not any(re.search(p, line) for p in program.get('drop', ()))]
    if program.get('unseeded'):
        joined = []
        for line in lines:
            if joined and line[:1].isspace():
                joined[-1] += line
            else:
                joined.append(line)
        lines = [re.sub(r'\s+', '', _NON_FINITE.sub('#', _NUMBER.sub('#', line))) for line in joined]
    return lines


def _numbers_close(a, b, rtol, atol):
    """Two printed numbers agree when they differ by at most one unit of the coarser printed
    place, plus rtol relative and atol absolute."""
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    places = max(len(s.split('.')[1].split('e')[0].split('E')[0]) if '.' in s else 0 for s in (a, b))
    return abs(x - y) <= 1.01 * 10.0 ** -places + rtol * abs(y) + atol


def compare(torch_lines, leafgrad_lines, rtol, atol=0.0):
    """'same', 'close' or the first line that differs."""
    if torch_lines == leafgrad_lines:
        return 'same', None
    for i, (t, g) in enumerate(zip(torch_lines, leafgrad_lines)):
        if t == g:
            continue
        if _NUMBER.sub('#', t) != _NUMBER.sub('#', g):
            return 'differs', (i, t, g)
        if not all(_numbers_close(b, a, rtol, atol) for a, b in zip(_NUMBER.findall(t), _NUMBER.findall(g))):
            return 'differs', (i, t, g)
    if len(torch_lines) != len(leafgrad_lines):
        i = min(len(torch_lines), len(leafgrad_lines))
        return 'differs', (i, torch_lines[i] if i < len(torch_lines) else '<end>',
                           leafgrad_lines[i] if i < len(leafgrad_lines) else '<end>')
    return 'close', None


def exception_line(stderr):
    """The error a failed command ended with: its type and its message's first line, not the
    traceback's frames (their paths and line numbers differ between the two runs)."""
    lines = stderr.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith('Traceback (most recent call last):')]
    if starts:
        rest = [line for line in lines[starts[-1] + 1:] if not line[:1].isspace()]
        if rest:
            return rest[0]
    return lines[-1] if lines else ''


def run_once(program, corpus, engine, timeout):
    """Run the program's commands in a fresh copy; returns (output, exit status, seconds)."""
    work = tempfile.mkdtemp(prefix='compat-')
    try:
        source = os.path.join(corpus, program['dir'])
        shutil.copytree(source, os.path.join(work, 'p'), ignore=shutil.ignore_patterns('.git'))
        cwd = os.path.join(work, 'p')
        paths = [os.path.join(cwd, p) for p in program.get('pythonpath', ())] + [ROOT] * (engine == 'leafgrad')
        env = dict(os.environ, MPLBACKEND='Agg', PYTHONHASHSEED='0', OMP_NUM_THREADS='1',
                   PYTHONPATH=os.pathsep.join(paths))
        for step in program.get('setup', ()):
            step(cwd)
        out, status, start = [], 0, time.perf_counter()
        for argv in program['run']:
            prefix = [sys.executable, '-m', 'leafgrad'] if engine == 'leafgrad' else [sys.executable]
            try:
                done = subprocess.run(prefix + list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                out.append(f'<timed out after {timeout} s>')
                status = 'timeout'
                break
            out.append(done.stdout)
            if done.returncode:
                out.append(exception_line(done.stderr))
                status = done.returncode
                break
        return '\n'.join(out), status, time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _torch_run(program, corpus, torch_cache, timeout):
    if not torch_cache:
        return run_once(program, corpus, 'torch', timeout)
    key = hashlib.sha256(repr((_CACHE_FORMAT, program['dir'], program['run'],
                               [s.__name__ for s in program.get('setup', ())]))
                         .encode()).hexdigest()[:16]
    path = os.path.join(torch_cache, key + '.json')
    if os.path.exists(path):
        with open(path) as f:
            return tuple(json.load(f))
    result = run_once(program, corpus, 'torch', timeout)
    if result[1] != 'timeout':  # a run cut short says nothing about the program: not kept
        os.makedirs(torch_cache, exist_ok=True)
        with open(path, 'w') as f:
            json.dump(result, f)
    return result


def run_program(program, corpus, torch_cache=None, timeout=600):
    """Run one program on PyTorch and on leafgrad; returns its result row and both outputs."""
    t_out, t_status, t_time = _torch_run(program, corpus, torch_cache, timeout)
    g_out, g_status, g_time = run_once(program, corpus, 'leafgrad', timeout)
    verdict, where = compare(normalise(t_out, program), normalise(g_out, program), program.get('rtol', 1e-3),
                             program.get('atol', 0.0))
    if verdict != 'differs' and t_status != g_status:
        verdict, where = 'differs', (None, f'exit {t_status}', f'exit {g_status}')
    row = {'name': program['name'], 'verdict': verdict, 'torch_status': t_status, 'leafgrad_status': g_status,
           'torch_s': round(t_time, 1), 'leafgrad_s': round(g_time, 1), 'first_difference': where,
           'why': program.get('why'), 'issue': program.get('issue')}
    return row, t_out, g_out


def _source(program):
    """The repository and the scripts run, as 'pytorch/examples `regression/main.py`'."""
    folder, _, sub = program['dir'].partition('/')
    scripts = ' + '.join(f'`{os.path.join(sub, argv[0])}`' for argv in program['run'])
    return f"{folder.replace('+', '/')} {scripts}"


def markdown_table(programs, results):
    """The results as the table compat/README.md shows."""
    rows = ['| program | source | verdict | why it differs | issue |', '| --- | --- | --- | --- | --- |']
    for program, row in zip(programs, results):
        verdict = {'same': 'agrees', 'close': 'agrees (within tolerance)'}.get(row['verdict'], 'differs')
        if verdict != 'differs' and row['torch_status']:
            verdict += ", both stop at PyTorch's error"
        why = program.get('why', '') if verdict == 'differs' else ''
        issue = program.get('issue', '') if verdict == 'differs' else ''
        rows.append(f"| {program['name']} | {_source(program)} | {verdict} | {why} | {issue} |")
    return '\n'.join(rows) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('names', nargs='*', help='programs to run (default: all)')
    parser.add_argument('--corpus', default=os.environ.get('LEAFGRAD_CORPUS', os.path.join(ROOT, 'compat', 'corpus')))
    parser.add_argument('--timeout', type=float, default=600)
    parser.add_argument('--json', help='write the results here')
    parser.add_argument('--torch-cache', help="a folder keeping PyTorch's runs, reused when a program's commands "
                        'are unchanged (PyTorch is the slower half of a run)')
    parser.add_argument('-v', '--verbose', action='store_true', help='print both outputs of a program that differs')
    parser.add_argument('--markdown', help="write the results here as a Markdown table (program, source, verdict, "
                        "and for a program that differs: why, and the issue that covers it)")
    args = parser.parse_args()
    chosen = [p for p in PROGRAMS if not args.names or p['name'] in args.names]
    results = []
    for program in chosen:
        row, t_out, g_out = run_program(program, args.corpus, args.torch_cache, args.timeout)
        results.append(row)
        print(f"{program['name']:<42} {row['verdict']:<8} torch {row['torch_s']:6.1f} s (exit {row['torch_status']})  "
              f"leafgrad {row['leafgrad_s']:6.1f} s (exit {row['leafgrad_status']})", flush=True)
        where = row['first_difference']
        if where is None and program.get('why'):
            print("    agrees now: its entry's 'why' (and 'issue') can go")
        if where is not None:
            print(f'    line {where[0]}:\n      torch:    {where[1][:200]}\n      leafgrad: {where[2][:200]}')
            if args.verbose:
                print('---- torch ----\n' + t_out + '\n---- leafgrad ----\n' + g_out)
    agree = sum(r['verdict'] in ('same', 'close') for r in results)
    print(f'\n{agree} of {len(results)} programs print what PyTorch prints')
    if args.markdown:
        with open(args.markdown, 'w') as f:
            f.write(markdown_table(chosen, results))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
