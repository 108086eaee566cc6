# The Jupyter server configuration of `make lab`, which puts this folder on JUPYTER_CONFIG_PATH
# (your own ~/.jupyter still loads; this file takes precedence over it). Running Lab some other
# way: JUPYTER_CONFIG_PATH=$PWD/.jupyter jupyter lab
#
# Starting a kernel makes JupyterLab copy the kernel's name and language into the notebook's
# metadata, which marks it modified and lets autosave rewrite a notebook nobody edited (the
# stage's dependency changes, git is dirty). The hook saves those entries as the file has them:
# see schedlab/labhooks.py; tests/test_lab.py checks it on a real server and kernel.
c = get_config()  # noqa: F821 (defined by Jupyter when it loads this file)
c.ContentsManager.pre_save_hook = "schedlab.labhooks.keep_kernel_metadata"
