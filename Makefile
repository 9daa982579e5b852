# The README's two commands are `make run` and `make test`; `make install` puts afproxy in place
# as a systemd service.
.PHONY: run test build deps release install install-files uninstall

run:
	scripts/run

test:
	scripts/test

build: deps
	swift build

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
# Where install-files takes the binaries from.
BUILDDIR ?= .build/release
UNITS = afproxy.service afproxy.socket afproxy-control.socket
REWRITE = sed -e 's|/usr/local/|$(PREFIX)/|g' -e 's|/etc/afproxy/|$(SYSCONFDIR)/afproxy/|g'

install: release install-files

release: deps
	swift build -c release --static-swift-stdlib

install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/afproxy $(DESTDIR)$(DOCDIR)
	install -m 0755 $(BUILDDIR)/afproxy $(BUILDDIR)/afproxyctl $(DESTDIR)$(BINDIR)/
	for unit in $(UNITS); do \
		$(REWRITE) systemd/$$unit > $(DESTDIR)$(UNITDIR)/$$unit && chmod 0644 $(DESTDIR)$(UNITDIR)/$$unit || exit 1; \
	done
	$(REWRITE) systemd/user/afproxy.service > $(DESTDIR)$(USERUNITDIR)/afproxy.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/afproxy.service
	install -m 0644 config/afproxy.conf $(DESTDIR)$(DOCDIR)/afproxy.conf.example
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
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
	@echo "left $(DESTDIR)$(SYSCONFDIR)/afproxy/afproxy.conf in place"
