"""Access to the plans repository: objects, refs, commits with trailers, the history index."""

from controller.git.attrfiles import check_git_env

# A boolean variable git dies on (``GIT_CONFIG_NOSYSTEM='1 '``) is E_GIT naming it, before
# anything reads a file as git would or GitPython's import runs git (round 84)
check_git_env()
