"""The corpus: real PyTorch programs from public sources, and how to run each one briefly.

Each entry names the folder of the corpus it runs in (``dir``, as ``compat/fetch.py`` lays it
out), the commands to run there (``run``: argv lists for ``python``), optional ``setup`` steps
(functions of the working folder: small data files made locally, never downloaded), regexes to
``mask`` or lines to ``drop`` before comparing (timings), the third-party modules it ``needs``
(pyproject's ``corpus`` extra installs them), the numeric tolerances ``rtol`` and
``atol``, ``unseeded`` for a program whose numbers come from an unseeded generator (PyTorch
seeds from the operating system: only the words are compared), and, where leafgrad does not yet
print what PyTorch prints, ``why`` (its first blocker) and the ``issue`` that covers it ('none yet'
where no issue does); ``tests/test_corpus.py`` runs every program without a ``why``.
"""
import os
import random

EXAMPLES = 'pytorch+examples'
TUTORIALS = 'pytorch+tutorials'
NANOGPT = 'karpathy+nanoGPT'
MINGPT = 'karpathy+minGPT'

TIMINGS = [r'\d+(\.\d+)?\s*(us|ms|s)\b', r'ms/batch\s+[\d.]+', r'time:\s*[\d.]+s', r'iter_dt [\d.]+ms']
PERCENT = [r'[\d.]+ percent']
# a profiler's table: its rows are sorted by measured time, so only its absence or presence is compared
PROFILER_TABLE = [r'^-{5,}', r'^\s*Name\s+Self CPU', r'^\s*\S+::\S+\s+[\d.]+%', r'^Self CPU time total']

# why a program does not yet print what PyTorch prints: its first blocker, and the issue covering it
PICKLED = dict(why="both torch.load calls refuse the pickled object (weights_only), but PyTorch's message offers "
               "two ways out and leafgrad's one: allowlisting the global (leafgrad has no weights_only=False)",
               issue='16 (checkpoints)')


def _head_lines(src, dst, start, stop):
    def step(cwd):
        with open(os.path.join(cwd, src), encoding='utf8') as f:
            lines = f.readlines()[start:stop]
        os.makedirs(os.path.dirname(os.path.join(cwd, dst)), exist_ok=True)
        with open(os.path.join(cwd, dst), 'w', encoding='utf8') as f:
            f.writelines(lines)
    return step


def _short_wikitext(cwd):
    # The repository's train.txt is too large to keep; a slice of its validation text stands in,
    # 15 batches of training. Kept short because at these learning rates float32 rounding
    # differences grow about tenfold every two steps (measured on the LSTM with dropout off: the
    # first step's loss equal to 9 digits and its gradient norm to 1e-7, the loss 1e-3 apart by
    # step 15), so that a longer run would compare rounding, not semantics.
    for name, (start, stop) in {'train': (0, 60), 'valid': (400, 460), 'test': (460, 520)}.items():
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


def _stand_in_module(name, submodules=()):
    # a module the program imports but does not need for what it prints (a plotting or data
    # package that is not installed): an empty stand-in in the working folder, which is first on
    # the path of both runs; the program stays as it is
    def stand_in(cwd):
        if submodules:
            os.makedirs(os.path.join(cwd, name), exist_ok=True)
            files = [os.path.join(name, module + '.py') for module in ('__init__', *submodules)]
        else:
            files = [name + '.py']
        for path in files:
            with open(os.path.join(cwd, path), 'w') as f:
                f.write(STAND_INS.get(name, ''))
    stand_in.__name__ = f'_stand_in_{name}'
    return stand_in


# what a stand-in module defines: torchviz.make_dot draws a graph the programs never print
STAND_INS = {'torchviz': 'def make_dot(*args, **kwargs):\n    return None\n'}


# torchvision (not installed; leafgrad could not run its compiled operators anyway) as the
# examples and tutorials here use it: datasets.MNIST, FashionMNIST, CIFAR10 and FakeData serve
# random images of their datasets' form (uint8 28x28 images, 32x32x3 ones, labels 0-9; 3x64x64
# pictures), made by NumPy from a fixed seed; the transforms they name compute as torchvision's
# do, and so does utils.make_grid; utils.save_image writes nothing. The programs stay as they
# are, and both runs read the same images.
TORCHVISION = {
    '__init__.py': 'from . import datasets, transforms, utils\n',
    'datasets.py': '''import numpy as np
import torch


class MNIST:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        rng = np.random.RandomState(0 if train else 1)
        n = 256 if train else 128
        self.data = torch.from_numpy(rng.randint(0, 256, (n, 28, 28)).astype(np.uint8))
        self.targets = torch.from_numpy(rng.randint(0, 10, n).astype(np.int64))
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, target = self.data[index].numpy(), int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FashionMNIST(MNIST):
    pass


class CIFAR10:
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        rng = np.random.RandomState(2 if train else 3)
        n = 256 if train else 128
        self.data = rng.randint(0, 256, (n, 32, 32, 3)).astype(np.uint8)
        self.targets = [int(t) for t in rng.randint(0, 10, n)]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FakeData:
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.size, self.image_size, self.num_classes = size, image_size, num_classes
        self.transform, self.target_transform, self.random_offset = transform, target_transform, random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        rng = np.random.RandomState(index + self.random_offset)
        c, h, w = self.image_size
        img = rng.randint(0, 256, (h, w, c)).astype(np.uint8)
        target = int(rng.randint(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
''',
    'transforms.py': '''import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class ToTensor:
    def __call__(self, pic):
        pic = pic[:, :, None] if pic.ndim == 2 else pic
        return torch.from_numpy(np.ascontiguousarray(pic.transpose((2, 0, 1)))).to(torch.get_default_dtype()).div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        tensor = tensor if self.inplace else tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        return tensor.sub_(mean).div_(std)


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)
''',
    'utils.py': '''import torch


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor)
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    if tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = (nmaps + xmaps - 1) // xmaps
    height, width = tensor.size(2) + padding, tensor.size(3) + padding
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid.narrow(1, y * height + padding, height - padding).narrow(2, x * width + padding, width - padding).copy_(
            tensor[k])
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    pass
''',
}


def _torchvision_stand_in(cwd):
    os.makedirs(os.path.join(cwd, 'torchvision'), exist_ok=True)
    for name, text in TORCHVISION.items():
        with open(os.path.join(cwd, 'torchvision', name), 'w') as f:
            f.write(text)


def _cora_stand_in(cwd):
    # the GAT example downloads the Cora citation graph unless ./cora holds it: a random graph of
    # the same form (1,700 papers, 24 binary features, Cora's 7 classes, 3,000 citations) stands in
    rng = random.Random(0)
    os.makedirs(os.path.join(cwd, 'cora'), exist_ok=True)
    ids = rng.sample(range(1, 10 ** 6), 1700)
    classes = ['Case_Based', 'Genetic_Algorithms', 'Neural_Networks', 'Probabilistic_Methods',
               'Reinforcement_Learning', 'Rule_Learning', 'Theory']
    with open(os.path.join(cwd, 'cora', 'cora.content'), 'w') as f:
        for i in ids:
            f.write('\t'.join([str(i)] + [str(int(rng.random() < 0.1)) for _ in range(24)] + [rng.choice(classes)])
                    + '\n')
    with open(os.path.join(cwd, 'cora', 'cora.cites'), 'w') as f:
        for _ in range(3000):
            f.write(f'{rng.choice(ids)}\t{rng.choice(ids)}\n')


def _cora_download_stand_in(cwd):
    # the GCN example downloads Cora's archive whatever is on disk (requests.get, then tarfile reads
    # its raw stream): the GAT example's stand-in graph, archived as cora.tgz, and a sitecustomize
    # on the path whose requests.get answers that URL with the local archive; the program stays
    # as it is
    import tarfile
    _cora_stand_in(cwd)
    with tarfile.open(os.path.join(cwd, 'cora.tgz'), 'w:gz') as tgz:
        tgz.add(os.path.join(cwd, 'cora'), arcname='cora')
    with open(os.path.join(cwd, 'sitecustomize.py'), 'w') as f:
        f.write(CORA_REQUESTS)


CORA_REQUESTS = '''import os
import requests

_get = requests.get
_ARCHIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cora.tgz')


class _LocalArchive:
    def __init__(self):
        self.raw = open(_ARCHIVE, 'rb')

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.raw.close()


def get(url, *args, **kwargs):
    if url.endswith('/cora.tgz'):
        return _LocalArchive()
    return _get(url, *args, **kwargs)


requests.get = get
'''


def _chargpt_text(cwd):
    # chargpt trains on ./input.txt (tiny Shakespeare, downloaded by hand): minGPT's README and
    # LICENSE stand in; they hold every character of its sampling prompt "O God, O God!"
    text = ''.join(open(os.path.join(cwd, name), encoding='utf8').read() for name in ('README.md', 'LICENSE'))
    with open(os.path.join(cwd, 'input.txt'), 'w', encoding='utf8') as f:
        f.write(text)


def _on_the_cpu(src, dst, timings):
    # a tutorial written for a GPU ("device = 'cuda'"), as it runs on a machine without one: the
    # device set to the CPU, and its benchmark loops shortened from 100 runs to 2 (their timings
    # are masked anyway)
    def on_the_cpu(cwd):
        with open(os.path.join(cwd, src), encoding='utf8') as f:
            text = f.read()
        text = text.replace("device = 'cuda'", "device = 'cpu'")
        for call in timings:
            text = text.replace(f'{call}(100)', f'{call}(2)')
        with open(os.path.join(cwd, dst), 'w', encoding='utf8') as f:
            f.write(text)
    return on_the_cpu


def _mnist_stand_in(cwd):
    # nn_tutorial downloads MNIST (data/mnist/mnist.pkl.gz: three (images, labels) pairs of numpy
    # arrays, images flattened to 784 floats in [0, 1)) unless the file exists: random arrays of
    # that form stand in, 256 training and 128 validation images, so that its eight 2-epoch
    # trainings take seconds
    import gzip
    import pickle
    import numpy as np
    rng = np.random.RandomState(0)

    def split(n):
        return rng.rand(n, 784).astype(np.float32), rng.randint(0, 10, n).astype(np.int64)
    os.makedirs(os.path.join(cwd, 'data', 'mnist'), exist_ok=True)
    with gzip.open(os.path.join(cwd, 'data', 'mnist', 'mnist.pkl.gz'), 'wb') as f:
        pickle.dump((split(256), split(128), split(128)), f)


def _ipython_stand_in(cwd):
    # nn_tutorial imports IPython's debugger for a commented-out set_trace()
    os.makedirs(os.path.join(cwd, 'IPython', 'core'), exist_ok=True)
    for path, text in {('IPython', '__init__.py'): '', ('IPython', 'core', '__init__.py'): '',
                       ('IPython', 'core', 'debugger.py'): 'def set_trace(*args, **kwargs):\n    pass\n'}.items():
        with open(os.path.join(cwd, *path), 'w') as f:
            f.write(text)


def _names_stand_in(cwd):
    # the NLP-from-scratch tutorials read data/names/<Language>.txt (downloaded by hand): a few
    # names in seven languages stand in, accented ones among them for unicodeToAscii
    names = {'Italian': ['Abandonato', 'Abatangelo', 'Abatantuono', 'Abate', 'Abategiovanni', 'Àbbadelli'],
             'English': ['Abbas', 'Abbey', 'Abbott', 'Jackson', 'Jones'],
             'German': ['Abbing', 'Abel', 'Abeln', 'Schmidt', 'Müller'],
             'Japanese': ['Abe', 'Abukara', 'Adachi', 'Satoshi', 'Sato'],
             'Russian': ['Ababko', 'Abaev', 'Rovakov', 'Ustinov', 'Shavakov'],
             'Spanish': ['Abana', 'Salla', 'Parra', 'Alvarez', 'Peña'],
             'Chinese': ['Ang', 'Chan', 'Hang', 'Zhou', 'Iun']}
    os.makedirs(os.path.join(cwd, 'data', 'names'), exist_ok=True)
    for language, lines in names.items():
        with open(os.path.join(cwd, 'data', 'names', language + '.txt'), 'w', encoding='utf8') as f:
            f.write('\n'.join(lines) + '\n')


def _eng_fra_stand_in(cwd):
    # the seq2seq tutorial reads data/eng-fra.txt (English, a tab, French; downloaded by hand):
    # a few pairs stand in, the French of every sentence it translates at the end among them
    pairs = ["I am cold.\tJ'ai froid.", "I'm too cold.\tJe suis trop froid.",
             'She is five years younger than me.\tElle a cinq ans de moins que moi.',
             'She is too short.\tElle est trop petit.', "I'm not scared to die.\tJe ne crains pas de mourir.",
             "He is a talented young director.\tC'est un jeune directeur plein de talent.",
             'You are very tall.\tVous êtes très grand.', 'We are tired.\tNous sommes fatigués.',
             'They are happy.\tIls sont heureux.', 'He is painting a picture.\tIl est en train de peindre un tableau.',
             "She's not a poet but a novelist.\tElle n'est pas poète mais romancière.",
             "You're too skinny.\tVous êtes trop maigre.", 'Go.\tVa !', 'Run!\tCours !']
    os.makedirs(os.path.join(cwd, 'data'), exist_ok=True)
    with open(os.path.join(cwd, 'data', 'eng-fra.txt'), 'w', encoding='utf8') as f:
        f.write('\n'.join(pairs) + '\n')


def _shortened(src, dst, replacements, seed=False):
    # a tutorial whose loops run for minutes, as it runs briefly: a copy with its iteration
    # counts lowered (``replacements``: old line, new line, each found once) and, with ``seed``,
    # torch and random (where it imports random) seeded right after their imports (it seeds
    # neither, and what it prints (guessed categories, sampled words) is words that follow the
    # weights or a shuffled order)
    def shortened(cwd):
        with open(os.path.join(cwd, src), encoding='utf8') as f:
            text = f.read()
        for old, new in replacements:
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        if seed:
            for module in ('torch', 'random'):
                line = f'import {module}\n'
                if module == 'random' and line not in text:
                    continue
                assert line in text, module
                text = text.replace(line, f'{line}{module}.manual_seed(0)\n' if module == 'torch'
                                    else f'{line}{module}.seed(0)\n', 1)
        with open(os.path.join(cwd, dst), 'w', encoding='utf8') as f:
            f.write(text)
    shortened.__name__ = f'_shortened_{os.path.splitext(os.path.basename(dst))[0]}_' + '_'.join(
        new.split('=')[-1].strip() for _, new in replacements)
    return shortened


def _tutorial(name, path, **extra):
    return dict(name=name, dir=os.path.join(TUTORIALS, os.path.dirname(path)),
                run=[[os.path.basename(path)]], **extra)


PROGRAMS = [
    # ---- pytorch/examples (BSD-3-Clause) ----------------------------------------------------
    # unseeded: PyTorch seeds its generator from the OS at start-up, so only the text is compared
    dict(name='examples/regression', dir=f'{EXAMPLES}/regression', run=[['main.py']], unseeded=True),
    dict(name='examples/time_sequence_prediction', dir=f'{EXAMPLES}/time_sequence_prediction',
         run=[['generate_sine_wave.py'], ['train.py', '--steps', '2']], **PICKLED),
    dict(name='examples/word_language_model LSTM', dir=f'{EXAMPLES}/word_language_model', setup=[_short_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--emsize', '32', '--nhid', '32', '--bptt', '20',
               '--batch_size', '10', '--log-interval', '5', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/word_language_model Transformer', dir=f'{EXAMPLES}/word_language_model',
         setup=[_short_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--model', 'Transformer', '--emsize', '32', '--nhid',
               '32', '--bptt', '20', '--batch_size', '10', '--log-interval', '5', '--lr', '5', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    # the same program's other recurrent models: a GRU, and Elman RNNs (tanh; ReLU with the
    # decoder's weights tied to the encoder's), at a tenth of the default learning rate: at
    # 20, float32 rounding differences (the first step's outputs and gradients equal to 2e-7,
    # relative) grow to 1e-3 in the loss within ten steps
    dict(name='examples/word_language_model GRU', dir=f'{EXAMPLES}/word_language_model', setup=[_short_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--model', 'GRU', '--emsize', '32', '--nhid', '32',
               '--bptt', '20', '--batch_size', '10', '--log-interval', '5', '--lr', '2', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/word_language_model RNN_TANH', dir=f'{EXAMPLES}/word_language_model',
         setup=[_short_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--model', 'RNN_TANH', '--emsize', '32', '--nhid', '32',
               '--bptt', '20', '--batch_size', '10', '--log-interval', '5', '--lr', '2', '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/word_language_model RNN_RELU tied', dir=f'{EXAMPLES}/word_language_model',
         setup=[_short_wikitext],
         run=[['main.py', '--data', 'small', '--epochs', '1', '--model', 'RNN_RELU', '--tied', '--emsize', '32',
               '--nhid', '32', '--bptt', '20', '--batch_size', '10', '--log-interval', '5', '--lr', '2',
               '--save', 'model.pt'],
              ['generate.py', '--data', 'small', '--checkpoint', 'model.pt', '--words', '30', '--log-interval', '10']],
         mask=TIMINGS),
    dict(name='examples/reinforcement_learning reinforce', dir=f'{EXAMPLES}/reinforcement_learning',
         setup=[_cartpole_solved_sooner], pythonpath=['.'], run=[['reinforce.py', '--log-interval', '1']],
         needs=['gymnasium'],
         mask=TIMINGS),
    dict(name='examples/reinforcement_learning actor_critic', dir=f'{EXAMPLES}/reinforcement_learning',
         setup=[_cartpole_solved_sooner], pythonpath=['.'], run=[['actor_critic.py', '--log-interval', '1']],
         needs=['gymnasium'],
         mask=TIMINGS),
    # the DDP series' single-device baseline: its Trainer moves the model to device 0 (CUDA)
    dict(name='examples/ddp-tutorial-series single_gpu', dir=f'{EXAMPLES}/distributed/ddp-tutorial-series',
         run=[['single_gpu.py', '2', '1', '--batch_size', '64']]),
    # the DDP series' one-machine form: torch.multiprocessing spawns one process per CUDA device
    # (none here, so none), then destroys a process group that was never made
    dict(name='examples/ddp-tutorial-series multigpu', dir=f'{EXAMPLES}/distributed/ddp-tutorial-series',
         run=[['multigpu.py', '2', '1']]),
    # DDP's toy example: without two accelerators it says so and exits
    dict(name='examples/distributed ddp', dir=f'{EXAMPLES}/distributed/ddp', run=[['example.py']]),
    # ---- pytorch/tutorials (BSD-3-Clause), single files -------------------------------------
    _tutorial('tutorials/polynomial_numpy', 'beginner_source/examples_tensor/polynomial_numpy.py', unseeded=True),
    _tutorial('tutorials/polynomial_tensor', 'beginner_source/examples_tensor/polynomial_tensor.py', unseeded=True),
    _tutorial('tutorials/polynomial_autograd', 'beginner_source/examples_autograd/polynomial_autograd.py',
              unseeded=True),
    # deterministic; a and c train to ~1e-9, zero within float32's rounding of 2,000-element sums
    _tutorial('tutorials/polynomial_custom_function', 'beginner_source/examples_autograd/polynomial_custom_function.py',
              atol=1e-7),
    _tutorial('tutorials/polynomial_nn', 'beginner_source/examples_nn/polynomial_nn.py', unseeded=True),
    _tutorial('tutorials/polynomial_optim', 'beginner_source/examples_nn/polynomial_optim.py', unseeded=True),
    _tutorial('tutorials/polynomial_module', 'beginner_source/examples_nn/polynomial_module.py', unseeded=True),
    _tutorial('tutorials/dynamic_net', 'beginner_source/examples_nn/dynamic_net.py', unseeded=True),
    _tutorial('tutorials/basics tensorqs', 'beginner_source/basics/tensorqs_tutorial.py', unseeded=True),
    _tutorial('tutorials/basics autogradqs', 'beginner_source/basics/autogradqs_tutorial.py', unseeded=True),
    _tutorial('tutorials/blitz tensor', 'beginner_source/blitz/tensor_tutorial.py', unseeded=True),
    _tutorial('tutorials/blitz autograd', 'beginner_source/blitz/autograd_tutorial.py', unseeded=True),
    _tutorial('tutorials/blitz neural_networks', 'beginner_source/blitz/neural_networks_tutorial.py', unseeded=True),
    _tutorial('tutorials/nlp pytorch_tutorial', 'beginner_source/nlp/pytorch_tutorial.py'),
    _tutorial('tutorials/nlp deep_learning', 'beginner_source/nlp/deep_learning_tutorial.py'),
    _tutorial('tutorials/nlp word_embeddings', 'beginner_source/nlp/word_embeddings_tutorial.py'),
    _tutorial('tutorials/nlp sequence_models', 'beginner_source/nlp/sequence_models_tutorial.py'),
    _tutorial('tutorials/nlp advanced (BiLSTM-CRF)', 'beginner_source/nlp/advanced_tutorial.py'),
    _tutorial('tutorials/introyt autogradyt', 'beginner_source/introyt/autogradyt_tutorial.py', unseeded=True,
              drop=PROFILER_TABLE),
    _tutorial('tutorials/introyt modelsyt', 'beginner_source/introyt/modelsyt_tutorial.py', unseeded=True),
    _tutorial('tutorials/introyt tensors_deeper', 'beginner_source/introyt/tensors_deeper_tutorial.py',
              unseeded=True),  # seeded, but it prints torch.empty's uninitialised memory
    _tutorial('tutorials/understanding_leaf_vs_nonleaf', 'beginner_source/understanding_leaf_vs_nonleaf_tutorial.py'),
    _tutorial('tutorials/forward_ad_usage', 'intermediate_source/forward_ad_usage.py', unseeded=True),
    _tutorial('tutorials/jacobians_hessians', 'intermediate_source/jacobians_hessians.py', mask=TIMINGS + PERCENT),
    _tutorial('tutorials/per_sample_grads', 'intermediate_source/per_sample_grads.py'),
    _tutorial('tutorials/ensembling', 'intermediate_source/ensembling.py'),
    dict(name='tutorials/per_sample_grads on the CPU', dir=f'{TUTORIALS}/intermediate_source',
         setup=[_on_the_cpu('per_sample_grads.py', 'per_sample_grads_cpu.py', ['timeit'])],
         run=[['per_sample_grads_cpu.py']], mask=TIMINGS + PERCENT),
    dict(name='tutorials/ensembling on the CPU', dir=f'{TUTORIALS}/intermediate_source',
         setup=[_on_the_cpu('ensembling.py', 'ensembling_cpu.py', ['timeit'])],
         run=[['ensembling_cpu.py']], mask=TIMINGS + PERCENT),
    _tutorial('tutorials/autograd_saved_tensors_hooks', 'intermediate_source/autograd_saved_tensors_hooks_tutorial.py',
              unseeded=True),
    _tutorial('tutorials/visualizing_gradients', 'intermediate_source/visualizing_gradients_tutorial.py',
              unseeded=True),
    _tutorial('recipes/defining_a_neural_network', 'recipes_source/recipes/defining_a_neural_network.py',
              unseeded=True),
    _tutorial('recipes/what_is_state_dict', 'recipes_source/recipes/what_is_state_dict.py'),
    _tutorial('recipes/saving_and_loading_a_general_checkpoint',
              'recipes_source/recipes/saving_and_loading_a_general_checkpoint.py'),
    _tutorial('recipes/saving_and_loading_models_for_inference',
              'recipes_source/recipes/saving_and_loading_models_for_inference.py', **PICKLED),
    _tutorial('recipes/saving_multiple_models_in_one_file',
              'recipes_source/recipes/saving_multiple_models_in_one_file.py'),
    _tutorial('recipes/warmstarting_model', 'recipes_source/recipes/'
              'warmstarting_model_using_parameters_from_a_different_model.py'),
    _tutorial('recipes/module_load_state_dict_tips', 'recipes_source/recipes/module_load_state_dict_tips.py',
              mask=[r'loading time with(out)? mmap=\S+']),
    _tutorial('recipes/reasoning_about_shapes', 'recipes_source/recipes/reasoning_about_shapes.py',
              mask=[r'Time taken: \S+']),
    _tutorial('recipes/swap_tensors', 'recipes_source/recipes/swap_tensors.py', unseeded=True,
              why='torch.ops.aten and Tensor._make_wrapper_subclass with __torch_dispatch__ (a tensor subclass that '
              'intercepts ATen ops), then torch.__future__.set_swap_module_params_on_conversion and '
              'Tensor.module_load',
              issue='none yet'),
    _tutorial('recipes/changing_default_device', 'recipes_source/recipes/changing_default_device.py', unseeded=True),
    _tutorial('tutorials/parametrizations', 'intermediate_source/parametrizations.py', unseeded=True),
    _tutorial('tutorials/pruning', 'intermediate_source/pruning_tutorial.py', unseeded=True),
    # (gradcheck and gradgradcheck of four custom Functions; it prints nothing, so agreeing means
    # that every check passed on leafgrad too)
    _tutorial('tutorials/custom_function_double_backward',
              'intermediate_source/custom_function_double_backward_tutorial.py', setup=[_stand_in_module('torchviz')]),
    _tutorial('tutorials/basics buildmodel', 'beginner_source/basics/buildmodel_tutorial.py',
              setup=[_stand_in_module('torchvision', ['datasets', 'transforms'])], unseeded=True),
    _tutorial('tutorials/blitz data_parallel', 'beginner_source/blitz/data_parallel_tutorial.py', unseeded=True),
    _tutorial('tutorials/Intro_to_TorchScript', 'beginner_source/Intro_to_TorchScript_tutorial.py',
              why="it prints torch.__version__, which leafgrad gives as PyTorch's with leafgrad's own as the local "
                  "part (2.13.0+leafgrad.0.1.0); then TorchScript's printed forms: torch.jit.trace returns the module "
                  "itself, without the .graph and .code of a TracedModule",
              issue='none yet'),
    _tutorial('tutorials/two_layer_net_custom_function',
              'beginner_source/examples_autograd/two_layer_net_custom_function.py', unseeded=True),
    _tutorial('tutorials/former_torchies nnft', 'beginner_source/former_torchies/nnft_tutorial.py', unseeded=True),
    _tutorial('tutorials/neural_tangent_kernels', 'intermediate_source/neural_tangent_kernels.py'),
    _tutorial('tutorials/nn_tutorial', 'beginner_source/nn_tutorial.py', setup=[_mnist_stand_in, _ipython_stand_in],
              needs=['requests', 'matplotlib'], unseeded=True),
    dict(name='tutorials/char_rnn_classification', dir=f'{TUTORIALS}/intermediate_source',
         setup=[_names_stand_in, _shortened('char_rnn_classification_tutorial.py', 'char_rnn_classification_short.py',
                                            [('n_iters = 100000', 'n_iters = 200'),
                                             ('print_every = 5000', 'print_every = 50'),
                                             ('plot_every = 1000', 'plot_every = 50'),
                                             ('n_confusion = 10000', 'n_confusion = 50')], seed=True)],
         run=[['char_rnn_classification_short.py']], needs=['matplotlib'], mask=[r'\(\d+m \d+s\)']),
    dict(name='tutorials/char_rnn_generation', dir=f'{TUTORIALS}/intermediate_source',
         setup=[_names_stand_in, _shortened('char_rnn_generation_tutorial.py', 'char_rnn_generation_short.py',
                                            [('n_iters = 100000', 'n_iters = 100'),
                                             ('print_every = 5000', 'print_every = 25'),
                                             ('plot_every = 500', 'plot_every = 25')], seed=True)],
         run=[['char_rnn_generation_short.py']], needs=['matplotlib'], mask=[r'\b\d+m \d+s\b']),
    _tutorial('tutorials/two_layer_net_autograd', 'beginner_source/examples_autograd/two_layer_net_autograd.py',
              unseeded=True),
    # two of the tutorial's first versions (Variable, size_average, loss.data[0] of a 0-dim loss):
    # both stop at PyTorch's IndexError, after its deprecation warnings
    _tutorial('tutorials/two_layer_net_module (2017)', 'beginner_source/examples_nn/two_layer_net_module.py'),
    _tutorial('tutorials/two_layer_net_optim (2017)', 'beginner_source/examples_nn/two_layer_net_optim.py'),
    dict(name='tutorials/seq2seq_translation', dir=f'{TUTORIALS}/intermediate_source',
         setup=[_eng_fra_stand_in, _shortened('seq2seq_translation_tutorial.py', 'seq2seq_translation_short.py',
                                              [('hidden_size = 256', 'hidden_size = 32'),
                                               ('trainIters(encoder1, attn_decoder1, 75000, print_every=5000)',
                                                'trainIters(encoder1, attn_decoder1, 75, print_every=25)')],
                                              seed=True)],
         run=[['seq2seq_translation_short.py']], needs=['matplotlib'], mask=[r'\b\d+m \d+s\b']),
    # (forward AD's first tutorial: it imports torch.nn.utils._stateless, which PyTorch no longer has, and
    # both stop at that ModuleNotFoundError after the dual tensors' first half)
    _tutorial('tutorials/forward_ad_tutorial', 'intermediate_source/forward_ad_tutorial.py'),
    _tutorial('tutorials/former_torchies autograd', 'beginner_source/former_torchies/autograd_tutorial.py',
              unseeded=True),
    _tutorial('tutorials/former_torchies tensor', 'beginner_source/former_torchies/tensor_tutorial.py',
              unseeded=True),
    _tutorial('tutorials/two_layer_net_tensor', 'beginner_source/examples_tensor/two_layer_net_tensor.py',
              unseeded=True),
    # (three gradchecks of custom Functions (a convolution, a batch norm, the two fused), then its
    # MNIST training, which needs torchvision's datasets: both stop at the empty stand-in's
    # AttributeError)
    _tutorial('tutorials/custom_function_conv_bn', 'intermediate_source/custom_function_conv_bn_tutorial.py',
              setup=[_stand_in_module('torchvision', ['datasets', 'transforms'])]),
    # (its strides in both memory formats; without cuDNN the model of its GPU part is never made,
    # and both stop at the NameError of the part after it)
    _tutorial('tutorials/memory_format', 'intermediate_source/memory_format_tutorial.py'),
    # a legacy Function (non-static forward): both stop at PyTorch's error
    _tutorial('tutorials/numpy_extensions', 'advanced_source/numpy_extensions_tutorial.py'),
    # (seeded: it prints the class its model predicts)
    dict(name='tutorials/basics quickstart', dir=f'{TUTORIALS}/beginner_source/basics',
         setup=[_torchvision_stand_in, _shortened('quickstart_tutorial.py', 'quickstart_seeded.py', [], seed=True)],
         run=[['quickstart_seeded.py']]),
    # (its first nn version: MSELoss(reduction='sum') and a manual gradient step under no_grad)
    _tutorial('tutorials/two_layer_net_nn', 'beginner_source/examples_nn/two_layer_net_nn.py', unseeded=True),
    # (seeded: it prints the labels of a shuffled batch, and DataLoader's two worker processes
    # load the images)
    dict(name='tutorials/blitz cifar10', dir=f'{TUTORIALS}/beginner_source/blitz',
         setup=[_torchvision_stand_in, _shortened('cifar10_tutorial.py', 'cifar10_seeded.py', [], seed=True)],
         run=[['cifar10_seeded.py']], needs=['matplotlib']),
    # ---- pytorch/examples' torch.fx demonstrations (run without data) -----------------------
    dict(name='examples/fx custom_tracer', dir=f'{EXAMPLES}/fx', run=[['custom_tracer.py']], needs=['tabulate']),
    dict(name='examples/fx inline_function', dir=f'{EXAMPLES}/fx', run=[['inline_function.py']]),
    dict(name='examples/fx invert', dir=f'{EXAMPLES}/fx', run=[['invert.py']]),
    dict(name='examples/fx primitive_library', dir=f'{EXAMPLES}/fx', run=[['primitive_library.py']]),
    dict(name='examples/fx profiling_tracer', dir=f'{EXAMPLES}/fx', run=[['profiling_tracer.py']], unseeded=True,
         mask=TIMINGS, drop=PROFILER_TABLE),  # (PyTorch's first profile of a process counts its start-up)
    dict(name='examples/fx proxy_based_graph_creation', dir=f'{EXAMPLES}/fx', run=[['proxy_based_graph_creation.py']]),
    dict(name='examples/fx replace_op', dir=f'{EXAMPLES}/fx', run=[['replace_op.py']], unseeded=True),
    dict(name='examples/fx subgraph_rewriter_basic_use', dir=f'{EXAMPLES}/fx',
         run=[['subgraph_rewriter_basic_use.py']]),
    dict(name='examples/fx wrap_output_dynamically', dir=f'{EXAMPLES}/fx', run=[['wrap_output_dynamically.py']],
         unseeded=True),
    dict(name='examples/gat', dir=f'{EXAMPLES}/gat', setup=[_cora_stand_in],
         run=[['main.py', '--epochs', '4', '--val-every', '1', '--hidden-dim', '8', '--num-heads', '2']],
         mask=TIMINGS),
    dict(name='examples/gcn', dir=f'{EXAMPLES}/gcn', setup=[_cora_download_stand_in], pythonpath=['.'],
         run=[['main.py', '--epochs', '4', '--val-every', '1', '--include-bias']], needs=['requests'],
         mask=TIMINGS),
    # ---- pytorch/examples' MNIST examples, on the torchvision stand-in's images ---------------
    dict(name='examples/mnist', dir=f'{EXAMPLES}/mnist', setup=[_torchvision_stand_in],
         run=[['main.py', '--epochs', '2', '--test-batch-size', '128', '--log-interval', '1', '--save-model']]),
    dict(name='examples/mnist_rnn', dir=f'{EXAMPLES}/mnist_rnn', setup=[_torchvision_stand_in],
         run=[['main.py', '--epochs', '2', '--test-batch-size', '128', '--log-interval', '1']]),
    # (it never seeds: its argument --seed is unused)
    dict(name='examples/mnist_forward_forward', dir=f'{EXAMPLES}/mnist_forward_forward',
         setup=[_torchvision_stand_in],
         run=[['main.py', '--epochs', '20', '--log-interval', '5', '--save_model']], unseeded=True),
    # (training in a process started by torch.multiprocessing (spawn) on the shared model; each
    # line starts with that process's id)
    dict(name='examples/mnist_hogwild', dir=f'{EXAMPLES}/mnist_hogwild', setup=[_torchvision_stand_in],
         run=[['main.py', '--epochs', '1', '--num-processes', '1', '--log-interval', '1', '--save_model']],
         mask=[r'(?m)^\d+(?=\t)']),
    dict(name='examples/vae', dir=f'{EXAMPLES}/vae', setup=[_torchvision_stand_in],
         run=[['main.py', '--epochs', '2', '--log-interval', '1']]),
    dict(name='examples/dcgan', dir=f'{EXAMPLES}/dcgan', setup=[_torchvision_stand_in],
         run=[['main.py', '--dataset', 'fake', '--workers', '0', '--batchSize', '8', '--ngf', '16', '--ndf', '16',
               '--nz', '20', '--manualSeed', '1', '--niter', '1', '--dry-run']]),
    # ---- pytorch/examples' RPC examples (CPU, two processes) ----------------------------------
    dict(name='examples/distributed rpc rnn', dir=f'{EXAMPLES}/distributed/rpc/rnn', run=[['main.py']],
         why='torch.distributed.rpc, torch.distributed.autograd and DistributedOptimizer (remote references, '
             "a backward pass across processes): leafgrad's torch.distributed has process groups and "
             'collectives, no RPC',
         issue='none yet'),
    # ---- karpathy/nanoGPT (MIT) -------------------------------------------------------------
    dict(name='nanoGPT train+sample (char, cpu)', dir=NANOGPT, setup=[_shakespeare_stand_in],
         needs=['requests', 'tiktoken'],
         run=[['data/shakespeare_char/prepare.py'],
              ['train.py', 'config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=2',
               '--eval_interval=10', '--log_interval=5', '--block_size=32', '--batch_size=4', '--n_layer=2',
               '--n_head=2', '--n_embd=32', '--max_iters=20', '--lr_decay_iters=20', '--dropout=0.1',
               '--always_save_checkpoint=True'],
              ['sample.py', '--out_dir=out-shakespeare-char', '--device=cpu', '--compile=False', '--num_samples=1',
               '--max_new_tokens=40']],
         mask=TIMINGS + [r'mfu -?[\d.]+%']),
    # training resumed from its checkpoint (the model, AdamW's state, the iteration), then sampled
    # from a prompt
    dict(name='nanoGPT train, resume, sample (char, cpu)', dir=NANOGPT, setup=[_shakespeare_stand_in],
         needs=['requests', 'tiktoken'],
         run=[['data/shakespeare_char/prepare.py'],
              ['train.py', 'config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=2',
               '--eval_interval=5', '--log_interval=5', '--block_size=16', '--batch_size=4', '--n_layer=1',
               '--n_head=2', '--n_embd=16', '--max_iters=10', '--lr_decay_iters=20', '--dropout=0.0',
               '--always_save_checkpoint=True'],
              ['train.py', 'config/train_shakespeare_char.py', '--device=cpu', '--compile=False', '--eval_iters=2',
               '--eval_interval=5', '--log_interval=5', '--block_size=16', '--batch_size=4', '--n_layer=1',
               '--n_head=2', '--n_embd=16', '--max_iters=20', '--lr_decay_iters=20', '--dropout=0.0',
               '--always_save_checkpoint=True', '--init_from=resume'],
              ['sample.py', '--out_dir=out-shakespeare-char', '--device=cpu', '--compile=False', '--num_samples=2',
               '--max_new_tokens=20', '--start=The ', '--temperature=0.5', '--top_k=5']],
         mask=TIMINGS + [r'mfu -?[\d.]+%']),
    # ---- karpathy/minGPT (MIT) --------------------------------------------------------------
    dict(name='minGPT adder', dir=MINGPT, pythonpath=['.'],
         run=[['projects/adder/adder.py', '--trainer.max_iters=21', '--trainer.batch_size=16',
               '--trainer.num_workers=0', '--data.ndigit=1']],
         mask=TIMINGS),
    dict(name='minGPT chargpt', dir=MINGPT, pythonpath=['.'], setup=[_chargpt_text],
         run=[['projects/chargpt/chargpt.py', '--data.block_size=32', '--model.model_type=gpt-nano',
               '--trainer.max_iters=21', '--trainer.batch_size=8', '--trainer.num_workers=0']],
         mask=TIMINGS),
]
