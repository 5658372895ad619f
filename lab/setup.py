"""Install the lab's package, horde_lab, beside horde_nb (`pip install -e lab` from the clone), so that the processes
its notebooks and commands start import it too. It is never published: the lab serves this repository only."""
from configparser import ConfigParser
from pathlib import Path
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read(Path(__file__).with_name('settings.ini'))
cfg = cfg['DEFAULT']

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    license='Apache-2.0',
    python_requires=f">={cfg['min_python']}",
    packages=[cfg['lib_path']],
    install_requires=['horde_nb'],
)
