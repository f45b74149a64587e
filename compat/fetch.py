"""Build the corpus folder that ``compat/run.py`` reads: public repositories at pinned commits.

    python compat/fetch.py [DIR] [--from-mirror MIRROR]   (DIR: compat/corpus by default, which git ignores)

The programs are other people's code under their own licences (listed below and kept beside
each copy); leafgrad's repository keeps only this list and how to run them. Needs git and
network access to github.com, or, with ``--from-mirror``, a folder of local copies of the
repositories laid out as the folders here (``MIRROR/pytorch+examples/repo``, a git directory or
a clone, for each repository; ``MIRROR/pytorch+tutorials/repo`` for the tutorials' files, which
are otherwise downloaded). A copy that lacks some files' contents (a snapshot without its largest
files) is checked out without them, and they are named on stderr.
"""
import argparse
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

# single files of pytorch/tutorials (BSD-3-Clause), a repository too large to clone for them: each
# at the commit it was read at (files of one tutorial series were read at different commits)
TUTORIALS = [
    ('beginner_source/examples_tensor/polynomial_numpy.py', '06782c92ebe7f6bf491fd4e03446a3c17200914c'),
    ('beginner_source/examples_tensor/polynomial_tensor.py', '4fe88118795089fb1d5d4b1e91834ea6e31f67e4'),
    ('beginner_source/examples_autograd/polynomial_autograd.py', '92f11a171bb3f3f6bbd8dfb102c59d67c2385032'),
    ('beginner_source/examples_autograd/polynomial_custom_function.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('beginner_source/examples_nn/polynomial_nn.py', '90fb0068a1941e996b100fd9b4e05dbaa497076e'),
    ('beginner_source/examples_nn/polynomial_optim.py', '96efa19f4e1be1b64c5474c1f3ae18a47d98aa90'),
    ('beginner_source/examples_nn/polynomial_module.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('beginner_source/examples_nn/dynamic_net.py', '1d189709801e98f5f184af0567c7f06b8b5156c2'),
    ('beginner_source/basics/tensorqs_tutorial.py', '0dea8a155bb46fd384abe428afcbb65e0a391739'),
    ('beginner_source/basics/autogradqs_tutorial.py', '1532c0de875b79f541371438d8d1d08be18f87de'),
    ('beginner_source/blitz/neural_networks_tutorial.py', '7a017bba463ba73cfd9d48aabc7e05827a680906'),
    ('beginner_source/blitz/tensor_tutorial.py', '08c4ec986e5eddc66264d3f00f256aafe22d2786'),
    ('beginner_source/blitz/autograd_tutorial.py', '56d1da96ef0e5acf5187d89c27d6ca6178170bc5'),
    ('beginner_source/nlp/pytorch_tutorial.py', 'cb7cc08cd2e436ace74fa66ae823382abd39fc6d'),
    ('beginner_source/nlp/deep_learning_tutorial.py', '016d0cc077f60c82b8497d4c7f92051ce40cafee'),
    ('beginner_source/nlp/word_embeddings_tutorial.py', '537d2173d209f790135701fa4dcdea2f73e718b7'),
    ('beginner_source/nlp/sequence_models_tutorial.py', 'f77e1c2c11be5d612ed9adbc73a8b82904162c23'),
    ('beginner_source/nlp/advanced_tutorial.py', '546ebc600c1972a19cc2aa858b081b85ac7bbf12'),
    ('beginner_source/introyt/autogradyt_tutorial.py', 'd228d10c8ad34972ab9a1f64a1fb0dada930b04c'),
    ('beginner_source/introyt/modelsyt_tutorial.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('beginner_source/understanding_leaf_vs_nonleaf_tutorial.py', '679432430fced456808254e3ae1476cd7d633ef0'),
    ('recipes_source/recipes/what_is_state_dict.py', '7c05b6bfde8f379c2bc9ec1f2af7acf21b25d8fa'),
    ('recipes_source/recipes/saving_and_loading_a_general_checkpoint.py', '68067f2f60ec60ae243dde00d68164cdea53c755'),
    ('recipes_source/recipes/saving_multiple_models_in_one_file.py', '39784aabea64449d046263eb4de22c34c24b408b'),
    ('recipes_source/recipes/warmstarting_model_using_parameters_from_a_different_model.py',
     '1291d4b5471ed9ba38dbd4cf61a3bf0a8c0cb4c3'),
    ('recipes_source/recipes/defining_a_neural_network.py', '1fba4578a1d9396b06ef21f53d96ec38a19447b9'),
    ('recipes_source/recipes/saving_and_loading_models_for_inference.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('recipes_source/recipes/module_load_state_dict_tips.py', '903b8c4b4181b10fa40a6aa7acb2c0b19ba54492'),
    ('recipes_source/recipes/reasoning_about_shapes.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('intermediate_source/forward_ad_usage.py', '2dac3e41051684b8a9ad78263220c053bf35f5b2'),
    ('intermediate_source/jacobians_hessians.py', '2dac3e41051684b8a9ad78263220c053bf35f5b2'),
    ('intermediate_source/per_sample_grads.py', 'db77dcf6e3637924f43852c014f2af9978b0f891'),
    ('intermediate_source/ensembling.py', '5130967035247c8343376ee69f49d6e10d61eaca'),
    ('intermediate_source/autograd_saved_tensors_hooks_tutorial.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('intermediate_source/visualizing_gradients_tutorial.py', 'd54656f9c54d0f9f476e9ba9864606ad731005ab'),
    ('recipes_source/recipes/swap_tensors.py', '23b2e00b6562c9252acc1c05c326f09ac3aedb71'),
    ('recipes_source/recipes/changing_default_device.py', '0a659232c0d83868b55cdd02c4d9363f8a4b862e'),
    ('beginner_source/introyt/tensors_deeper_tutorial.py', 'ef26e61a99db1fc39331898a14e93beba8e3ab93'),
    ('intermediate_source/parametrizations.py', '3d37bd7d070abfd7fa7b850be4cce22cb7c0315c'),
    ('intermediate_source/pruning_tutorial.py', '92f11a171bb3f3f6bbd8dfb102c59d67c2385032'),
    ('intermediate_source/custom_function_double_backward_tutorial.py', '0ece40a1f1c8b0adb2c03fe2cb480762b96c09ee'),
    ('beginner_source/basics/buildmodel_tutorial.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('advanced_source/numpy_extensions_tutorial.py', '0651409a7265828ba6907f1c42a68f56b4ed7606'),
    ('beginner_source/blitz/data_parallel_tutorial.py', 'cc541c0ed7ae6569b782ee3ae18016c9fe9ded05'),
    ('beginner_source/Intro_to_TorchScript_tutorial.py', 'db77dcf6e3637924f43852c014f2af9978b0f891'),
    ('beginner_source/examples_autograd/two_layer_net_custom_function.py', '8bcd0ac63dff35599649fc78711b6c155717823f'),
    ('beginner_source/former_torchies/nnft_tutorial.py', '560afe606d62af26831dcf847c74da134fedb14a'),
    ('intermediate_source/neural_tangent_kernels.py', 'da987e54334026bff6bad451b97d422ed029a810'),
    ('beginner_source/nn_tutorial.py', '764a8d6aed986f155098d91ea55a1f0c95b26dd8'),
    ('intermediate_source/char_rnn_classification_tutorial.py', '10098032865151e891c6074522207880f0e68fd3'),
    ('intermediate_source/char_rnn_generation_tutorial.py', '4ce8b871ef249dfacc1b389108842a0c2c0805b7'),
    ('beginner_source/examples_autograd/two_layer_net_autograd.py', '15bfd259a60e64010d98cc9ed47c2ba45b12726b'),
    ('beginner_source/examples_nn/two_layer_net_module.py', '6f53cd7c257a9ace7f6198bc3d22bdd8547414fd'),
    ('beginner_source/examples_nn/two_layer_net_optim.py', '29c5caad33fdcd34418e62e7cfdddab5c3bd2021'),
    ('intermediate_source/seq2seq_translation_tutorial.py', '803c1b1273a47bc53bb6cd5f63eecfb897bbc856'),
    ('intermediate_source/forward_ad_tutorial.py', '3102426fde898f63f7c1db3c6099bb161a04ce9c'),
    ('beginner_source/former_torchies/autograd_tutorial.py', '6d0edbbe17900c8ead4969ecb8c0c0918202a11c'),
    ('beginner_source/former_torchies/tensor_tutorial.py', '4ba126213d3cfa9e10ecde3faaf3d93e9d9d02c1'),
    ('beginner_source/examples_tensor/two_layer_net_tensor.py', '0ad33d606682537466f3430fc6d6ac7d47460f1a'),
    ('intermediate_source/custom_function_conv_bn_tutorial.py', '00e250bb5194997fb2c89f073c58d5e8c4cd1d2b'),
    ('intermediate_source/memory_format_tutorial.py', '2286ae10745d598389338a3555a3090c37572cfe'),
    ('beginner_source/basics/quickstart_tutorial.py', 'afcd669d56554c2ef46f2da92edbfaf8c54043ec'),
    ('beginner_source/examples_nn/two_layer_net_nn.py', '12645e91811595c58a0de1308639aef9870a2be5'),
    ('beginner_source/blitz/cifar10_tutorial.py', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
    ('LICENSE', 'c53e7d4efc0e39e455c531d21ec7db28ba220214'),
]


def _missing_files(dest, commit):
    """The files of ``commit`` whose contents the clone lacks (a partial snapshot's)."""
    listing = subprocess.run(['git', '-C', dest, 'ls-tree', '-r', '-z', commit], capture_output=True,
                             check=True).stdout
    blobs = []
    for entry in filter(None, listing.split(b'\0')):
        meta, path = entry.split(b'\t', 1)
        _mode, kind, name = meta.split()
        if kind == b'blob':
            blobs.append((name, path.decode()))
    if not blobs:
        return []
    answers = subprocess.run(['git', '-C', dest, 'cat-file', '--batch-check'], capture_output=True, check=True,
                             input=b''.join(name + b'\n' for name, _ in blobs)).stdout.splitlines()
    return [path for (_, path), answer in zip(blobs, answers) if answer.endswith(b' missing')]


def _checkout_from_mirror(dest, commit):
    """HEAD at ``commit`` and its files in the work tree, but for those whose contents are absent."""
    missing = _missing_files(dest, commit)
    subprocess.run(['git', '-C', dest, 'update-ref', '--no-deref', 'HEAD', commit], check=True)
    subprocess.run(['git', '-C', dest, 'checkout', '--quiet', commit, '--', '.']
                   + [f':(exclude,literal){path}' for path in missing], check=True)
    for path in missing:
        print(f'{os.path.basename(dest)}: {path} is not in the mirror; left out', file=sys.stderr)


def fetch(target, mirror=None):
    os.makedirs(target, exist_ok=True)
    for folder, (url, commit, _licence) in REPOSITORIES.items():
        dest = os.path.join(target, folder)
        if mirror is None:
            if not os.path.isdir(dest):
                subprocess.run(['git', 'clone', '--quiet', url, dest], check=True)
            subprocess.run(['git', '-C', dest, 'checkout', '--quiet', commit], check=True)
        else:
            if not os.path.isdir(dest):
                subprocess.run(['git', 'clone', '--quiet', '--no-checkout', os.path.join(mirror, folder, 'repo'),
                                dest], check=True)
            _checkout_from_mirror(dest, commit)
    tutorials = os.path.join(mirror, 'pytorch+tutorials', 'repo') if mirror is not None else None
    for path, commit in TUTORIALS:
        dest = os.path.join(target, 'pytorch+tutorials', path)
        if os.path.exists(dest):
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if tutorials is not None and os.path.isdir(tutorials):
            text = subprocess.run(['git', f'--git-dir={_git_dir(tutorials)}', 'show', f'{commit}:{path}'],
                                  capture_output=True, check=True).stdout
            with open(dest, 'wb') as f:
                f.write(text)
        else:
            urllib.request.urlretrieve(f'https://raw.githubusercontent.com/pytorch/tutorials/{commit}/{path}', dest)


def _git_dir(path):
    """A clone's git directory, or the path itself if it is one (a bare copy)."""
    return os.path.join(path, '.git') if os.path.isdir(os.path.join(path, '.git')) else path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('target', nargs='?', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus'))
    parser.add_argument('--from-mirror', metavar='MIRROR', help='take the repositories from local copies, '
                        'MIRROR/<owner>+<name>/repo, instead of github.com')
    args = parser.parse_args(argv)
    fetch(args.target, args.from_mirror)


if __name__ == '__main__':
    main()
