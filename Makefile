# The README's two commands are `make run` and `make test`.
.PHONY: run test build deps

run:
	scripts/run

test:
	scripts/test

build: deps
	swift build

deps:
	scripts/install-deps
