"""The corpus: real PyTorch programs from public sources, and how to run each one briefly.

Each entry names the folder of the corpus it runs in (``dir``, as ``compat/fetch.py`` lays it
out), the commands to run there (``run``: argv lists for ``python``), optional ``setup`` steps
(functions of the working folder: small data files made locally, never downloaded), regexes to
``mask`` or lines to ``drop`` before comparing (timings), the numeric tolerance ``rtol``, ``unseeded`` for a program whose numbers come from an unseeded
generator (PyTorch seeds from the operating system: only the words are compared), and,
where leafgrad does not yet print what PyTorch prints, the ``issue`` that covers it.
"""
import os

EXAMPLES = 'pytorch+examples'
TUTORIALS = 'pytorch+tutorials'
NANOGPT = 'karpathy+nanoGPT'
MINGPT = 'karpathy+minGPT'

TIMINGS = [r'\d+(\.\d+)?\s*(ms|s)\b', r'ms/batch\s+[\d.]+', r'time:\s*[\d.]+s', r'iter_dt [\d.]+ms']


def _head_lines(src, dst, start, stop):
    def step(cwd):
        with open(os.path.join(cwd, src), encoding='utf8') as f:
            lines = f.readlines()[start:stop]
        os.makedirs(os.path.dirname(os.path.join(cwd, dst)), exist_ok=True)
        with open(os.path.join(cwd, dst), 'w', encoding='utf8') as f:
            f.writelines(lines)
    return step


def _small_wikitext(cwd):
    # the repository's train.txt is too large to keep; a slice of its validation text stands in
    for name, (start, stop) in {'train': (0, 400), 'valid': (400, 460), 'test': (460, 520)}.items():
        _head_lines('data/wikitext-2/valid.txt', f'small/{name}.txt', start, stop)(cwd)


def _shakespeare_stand_in(cwd):
    # nanoGPT's prepare.py downloads tiny Shakespeare unless input.txt exists: give it one
    text = ''.join(open(os.path.join(cwd, name), encoding='utf8').read() for name in ('README.md', 'LICENSE'))
    with open(os.path.join(cwd, 'data', 'shakespeare_char', 'input.txt'), 'w', encoding='utf8') as f:
        f.write(text * 4)


def _cartpole_solved_sooner(cwd):
    # the programs train until CartPole's reward threshold (475): minutes. The program stays as it
    # is; a sitecustomize on the path lowers the threshold it reads from gymnasium's registry.
    with open(os.path.join(cwd, 'sitecustomize.py'), 'w') as f:
        f.write('import gymnasium\ngymnasium.envs.registration.registry["CartPole-v1"].reward_threshold = 15\n')


def _tutorial(name, path, **extra):
    return dict(name=name, dir=os.path.join(TUTORIALS, os.path.dirname(path)),
                run=[[os.path.basename(path)]], **extra)


PROGRAMS = [
    # ---- pytorch/examples (BSD-3-Clause) ----------------------------------------------------
    # unseeded: PyTorch seeds its generator from the OS at start-up, so only the text is compared
    dict(name='examples/regression', dir=f'{EXAMPLES}/regression', run=[['main.py']], unseeded=True),
    dict(name='examples/time_sequence_prediction', dir=f'{EXAMPLES}/time_sequence_prediction',
         run=[['generate_sine_wave.py'], ['train.py', '--steps', '2']]),
    dict(name='examples/word_language_model LSTM', dir=f'{EXAMPLES}/word_language_model', setup=[_small_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--emsize', '32', '--nhid', '32', '--bptt', '20',
               '--batch_size', '10', '--log-interval', '5', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/word_language_model Transformer', dir=f'{EXAMPLES}/word_language_model',
         setup=[_small_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--model', 'Transformer', '--emsize', '32', '--nhid',
               '32', '--bptt', '20', '--batch_size', '10', '--log-interval', '5', '--lr', '5', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/reinforcement_learning reinforce', dir=f'{EXAMPLES}/reinforcement_learning',
         setup=[_cartpole_solved_sooner], pythonpath=['.'], run=[['reinforce.py', '--log-interval', '1']], mask=TIMINGS),
    dict(name='examples/reinforcement_learning actor_critic', dir=f'{EXAMPLES}/reinforcement_learning',
         setup=[_cartpole_solved_sooner], pythonpath=['.'], run=[['actor_critic.py', '--log-interval', '1']], mask=TIMINGS),
    # ---- karpathy/nanoGPT (MIT) -------------------------------------------------------------
    dict(name='nanoGPT train+sample (char, cpu)', dir=NANOGPT, setup=[_shakespeare_stand_in],
         run=[['data/shakespeare_char/prepare.py'],
              ['train.py', 'config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=2',
               '--eval_interval=10', '--log_interval=5', '--block_size=32', '--batch_size=4', '--n_layer=2',
               '--n_head=2', '--n_embd=32', '--max_iters=20', '--lr_decay_iters=20', '--dropout=0.1',
               '--always_save_checkpoint=True'],
              ['sample.py', '--out_dir=out-shakespeare-char', '--device=cpu', '--compile=False', '--num_samples=1',
               '--max_new_tokens=40']],
         mask=TIMINGS + [r'mfu -?[\d.]+%']),
    # ---- karpathy/minGPT (MIT) --------------------------------------------------------------
    dict(name='minGPT adder', dir=MINGPT, pythonpath=['.'],
         run=[['projects/adder/adder.py', '--trainer.max_iters=21', '--trainer.batch_size=16',
               '--trainer.num_workers=0', '--data.ndigit=1']],
         mask=TIMINGS),
]
