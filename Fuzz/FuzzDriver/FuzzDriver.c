// FuzzDriver.h declares libFuzzer's driver; a C target needs one source file.
