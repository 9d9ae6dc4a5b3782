"""External environments: the four code conventions, failure conventions, the importer."""
