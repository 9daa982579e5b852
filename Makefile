# The README's two commands are `make run` and `make test`; `make install` puts afproxy in place
# as a systemd service.
.PHONY: run test test-tsan build deps release install install-files generated uninstall deb deb-files static-debug

run:
	scripts/run

test:
	scripts/test

# The unit tests and the integration suite under ThreadSanitizer (a build and a suite longer than
# make test can add): run it after any change to threads, locks or the task core.
test-tsan:
	scripts/sanitize thread -n 3 --dist loadfile

# The flags every debug build here passes: scripts/swift-flags says which and why (one set, so that
# make build, make run, make static-debug and make test never compile each other's work again).
SWIFT_FLAGS := $(shell scripts/swift-flags)

build: deps
	swift build $(SWIFT_FLAGS)

deps:
	scripts/install-deps

# ---- install ------------------------------------------------------------------------------
# make install [PREFIX=/usr/local] [SYSCONFDIR=/etc] [DESTDIR=staging dir]
# Binaries linked with --static-swift-stdlib: they need nothing but Debian's libraries
# (libcurl4, libsystemd0). The units are rewritten for PREFIX and SYSCONFDIR. An existing
# config file is kept; the annotated example is always in $(DOCDIR).

PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(PREFIX)/lib/systemd/system
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
DOCDIR ?= $(PREFIX)/share/doc/afproxy
MANDIR ?= $(PREFIX)/share/man
# Where each shell looks for completions under PREFIX: bash-completion and fish through
# XDG_DATA_DIRS; zsh's fpath has site-functions under /usr/local and vendor-completions under /usr
# (Debian's zsh).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/share/zsh/vendor-completions,$(PREFIX)/share/zsh/site-functions)
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# Where install-files takes the binaries from.
BUILDDIR ?= .build/release
# Man pages and completions are made here from the binaries being installed (scripts/gen-man
# says why they are not committed).
GENDIR ?= $(BUILDDIR)/generated
UNITS = afproxy.service afproxy.socket afproxy-control.socket afproxy-capture@.service
REWRITE = sed -e 's|/usr/local/|$(PREFIX)/|g' -e 's|/etc/afproxy/|$(SYSCONFDIR)/afproxy/|g'

install: release install-files

# --static-swift-stdlib with the libraries static Foundation needs named: when objects compiled for
# the shared runtime are there (`make run`, plain `swift build`), SwiftPM only relinks them, and
# their autolink entries name Foundation alone, whose shared library brings CoreFoundation, ICU and
# its C shims along; the static archives do not, and the link fails without these.
STATIC_LINK = --static-swift-stdlib -Xlinker -lCoreFoundation -Xlinker -l_FoundationICU \
	-Xlinker -l_FoundationCShims -Xlinker -l_FoundationCollections

release: deps
	swift build -c release $(STATIC_LINK)

# The debug binaries linked as the release ones are (a relink, no recompile): what scripts/test
# runs the integration tests against, and what Tests/integration/test_deb.py packages.
static-debug:
	swift build --product afproxy $(SWIFT_FLAGS) $(STATIC_LINK)
	swift build --product afproxyctl $(SWIFT_FLAGS) $(STATIC_LINK)

# A completion file is sourced, never run: the generator's #! line goes.
generated:
	scripts/gen-man $(GENDIR) $(BUILDDIR)/afproxy $(BUILDDIR)/afproxyctl
	for tool in afproxy afproxyctl; do \
		$(BUILDDIR)/$$tool --generate-completion-script bash | sed '1{/^#!/d}' > $(GENDIR)/$$tool.bash && \
		$(BUILDDIR)/$$tool --generate-completion-script zsh > $(GENDIR)/_$$tool && \
		$(BUILDDIR)/$$tool --generate-completion-script fish > $(GENDIR)/$$tool.fish || exit 1; \
	done

install-files: generated
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/afproxy $(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0755 $(BUILDDIR)/afproxy $(BUILDDIR)/afproxyctl $(DESTDIR)$(BINDIR)/
	for unit in $(UNITS); do \
		$(REWRITE) systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit && chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	$(REWRITE) systemd/user/afproxy.service > $(DESTDIR)$(USERUNITDIR)/afproxy.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/afproxy.service
	install -m 0644 config/afproxy.conf $(DESTDIR)$(DOCDIR)/afproxy.conf.example
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 docs/*.md docs/dashboard.png $(DESTDIR)$(DOCDIR)/docs/
	install -m 0644 $(GENDIR)/afproxyctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(GENDIR)/afproxy.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(GENDIR)/afproxy.8 $(DESTDIR)$(MANDIR)/man8/
	for tool in afproxy afproxyctl; do \
		install -m 0644 $(GENDIR)/$$tool.bash $(DESTDIR)$(BASHCOMPDIR)/$$tool && \
		install -m 0644 $(GENDIR)/_$$tool $(DESTDIR)$(ZSHCOMPDIR)/_$$tool && \
		install -m 0644 $(GENDIR)/$$tool.fish $(DESTDIR)$(FISHCOMPDIR)/$$tool.fish || exit 1; \
	done
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/afproxy/afproxy.conf ]; then \
		echo "kept $(DESTDIR)$(SYSCONFDIR)/afproxy/afproxy.conf (the example is $(DOCDIR)/afproxy.conf.example)"; \
	else \
		install -m 0644 config/afproxy.conf $(DESTDIR)$(SYSCONFDIR)/afproxy/afproxy.conf; \
	fi
	@[ -n "$(DESTDIR)" ] || ! command -v systemctl >/dev/null || [ ! -d /run/systemd/system ] || systemctl daemon-reload

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/afproxy $(DESTDIR)$(BINDIR)/afproxyctl
	for unit in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$unit; done
	rm -f $(DESTDIR)$(USERUNITDIR)/afproxy.service
	rm -rf $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(MANDIR)/man1/afproxyctl.1 $(DESTDIR)$(MANDIR)/man5/afproxy.conf.5 \
		$(DESTDIR)$(MANDIR)/man8/afproxy.8
	for tool in afproxy afproxyctl; do \
		rm -f $(DESTDIR)$(BASHCOMPDIR)/$$tool $(DESTDIR)$(ZSHCOMPDIR)/_$$tool $(DESTDIR)$(FISHCOMPDIR)/$$tool.fish; \
	done
	@echo "left $(DESTDIR)$(SYSCONFDIR)/afproxy/afproxy.conf in place"

# ---- Debian package -----------------------------------------------------------------------
# make deb [DEBDIR=.build/deb]: afproxy_VERSION_ARCH.deb from the release build (scripts/make-deb
# lays it out with debhelper from install-files and checks it with lintian). deb-files packages
# what BUILDDIR holds without building (its binaries must be linked with --static-swift-stdlib).
DEBDIR ?= .build/deb

deb: release deb-files

deb-files:
	scripts/make-deb $(BUILDDIR) $(DEBDIR)
