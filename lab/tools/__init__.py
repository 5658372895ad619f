"Developer tools of the repository (not installed with the package); `tools.reference` runs the authors' code."
