"""One module per op family: conformance(), smoke(), golden()."""
