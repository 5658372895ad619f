"""Install horde_nb from the settings in settings.ini (the nbdev 2 layout).

Why these tool pins (checked on Python 3.11, 2026-11):
- nbdev 2.4.14 is the last nbdev 2 release; nbdev 3 refuses a project configured by settings.ini.
- nbdev 2.4.14 declares fastcore>=1.12.3 and execnb>=0.1.12 itself. Newer execnb (0.2+) and
  fastcore (1.13+/2.x) change APIs nbdev 2.4.14 calls, so both are capped at the versions we
  tested: execnb 0.1.18 and fastcore 1.12.47. (The older advice "fastcore 1.8.x" cannot be
  installed next to nbdev 2.4.14: pip reports the conflict.)
- avalanche-lib 0.6 (the `avalanche` extra, in `dev` too so that CI tests nbs/06_runs/11_interop) installs beside these pins without
  changing torch; 0.7 is untested, hence the cap.
- torch / torchvision come from the package registry; its torchvision wheels are CUDA builds that
  need the matching registry torch, and run fine on a CPU-only machine.
"""
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini')
cfg = cfg['DEFAULT']

requirements = cfg['requirements'].split()
dev_requirements = cfg['dev_requirements'].split()
logs_requirements = cfg['logs_requirements'].split()
reference_requirements = cfg['reference_requirements'].split()
avalanche_requirements = cfg['avalanche_requirements'].split()
scripts = [s.strip() for s in cfg['console_scripts'].split('\n') if s.strip()]

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    description=cfg['description'],
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    author=cfg['author'],
    license='Apache-2.0',
    url=cfg['git_url'],
    python_requires=f">={cfg['min_python']}",
    packages=setuptools.find_packages(include=[cfg['lib_name'], f"{cfg['lib_name']}.*"]),
    install_requires=requirements,
    extras_require={'dev': dev_requirements + logs_requirements + avalanche_requirements, 'logs': logs_requirements,
                    'reference': reference_requirements,  # lab/tools/reference/ runs the authors' code
                    'avalanche': avalanche_requirements},  # our scenarios as Avalanche benchmarks (nbs/06_runs/11_interop)
    entry_points={'console_scripts': scripts, 'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    include_package_data=True,
    zip_safe=False,
)
