"""Cook only the shader permutations a game's glTF content actually uses.

The stable entry point for other programs is :mod:`pipeline.api`.
"""

__version__ = "0.1.0"
