#!/bin/sh
# keyring-session.sh — run a command against a fresh, unlocked gnome-keyring
# Secret Service in a private, headless D-Bus session.
#
#   HOME=$(mktemp -d) dbus-run-session -- sh scripts/keyring-session.sh CMD [ARG...]
#
# It refuses to run without a session bus, on a bus that already has a Secret
# Service, or against a HOME that already holds keyrings, so it never touches
# a real user's keyring. It starts gnome-keyring-daemon with only the secrets
# component, unlocking a new "login" collection with $KEYRING_PW (default
# "ci"), waits (bounded) until org.freedesktop.secrets is owned on the bus AND
# the login collection is present and unlocked, exports
# MCPWARD_TEST_SECRET_SERVICE=1 and execs CMD. gnome-keyring-daemon exits
# with the bus when dbus-run-session ends. Every file it writes stays under
# HOME (XDG_* and XDG_RUNTIME_DIR are pointed there).
#
# Needs (Debian/Ubuntu): gnome-keyring dbus dbus-x11 libsecret-tools libglib2.0-bin
set -eu

die() { echo "keyring-session: $*" >&2; exit 1; }

[ $# -gt 0 ] || die "usage: HOME=\$(mktemp -d) dbus-run-session -- sh $0 CMD [ARG...]"
[ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ] || die "no session bus: run me under dbus-run-session"
[ -n "${HOME:-}" ] && [ -d "$HOME" ] || die "HOME must be an existing (temporary) directory"
[ ! -e "$HOME/.local/share/keyrings" ] || die "HOME already holds keyrings; use HOME=\$(mktemp -d)"
for tool in gnome-keyring-daemon gdbus; do
	command -v "$tool" >/dev/null 2>&1 || die "missing $tool (apt-get install gnome-keyring libglib2.0-bin)"
done

# Everything the daemon writes stays under the temporary HOME.
export XDG_DATA_HOME="$HOME/.local/share"
export XDG_CONFIG_HOME="$HOME/.config"
export XDG_CACHE_HOME="$HOME/.cache"
export XDG_RUNTIME_DIR="$HOME/.run"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
unset GNOME_KEYRING_CONTROL SSH_AUTH_SOCK DISPLAY WAYLAND_DISPLAY

# Bus name owner check; NameHasOwner never activates a service.
owned() {
	gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
		--method org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true
}
# A fresh private bus has no Secret Service yet. One that has is a real
# user's session: the tests would lock and write its login keyring.
! owned || die "org.freedesktop.secrets is already owned on this bus: not a fresh session (run under dbus-run-session)"

out=$(printf %s "${KEYRING_PW:-ci}" | gnome-keyring-daemon --unlock --components=secrets) ||
	die "gnome-keyring-daemon --unlock failed"
eval "$out"
[ -n "${GNOME_KEYRING_CONTROL:-}" ] && export GNOME_KEYRING_CONTROL

# Bounded wait (20 s): the bus name is owned, then the login collection is
# listed and unlocked. Calling the service before its name is owned lets the
# bus activate a second, locked daemon (3 runs in 40 failed without a wait).
login_unlocked() {
	gdbus call --session --dest org.freedesktop.secrets \
		--object-path /org/freedesktop/secrets/collection/login \
		--method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked \
		2>/dev/null | grep -q false
}
i=0
until owned && login_unlocked; do
	i=$((i + 1))
	[ "$i" -le 400 ] || die "Secret Service not ready after 20s (org.freedesktop.secrets owned / login collection unlocked)"
	sleep 0.05
done

export MCPWARD_TEST_SECRET_SERVICE=1
exec "$@"
