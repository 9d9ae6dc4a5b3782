"""Tool descriptors and argument types: schemas from signatures, argument checks shared by runtimes."""
