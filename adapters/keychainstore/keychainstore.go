// Package keychainstore implements ports.TokenStore on the operating
// system's keychain, through github.com/99designs/keyring: the Secret
// Service (D-Bus) on Linux, the Keychain on macOS and the Credential Manager
// on Windows. No other keyring backend is ever used — not the file, pass,
// keyctl or kwallet backends — so a keychain that is locked, missing or
// refuses access is ports.ErrUnavailable, never a silent fallback to weaker
// storage.
//
// Keys are stored as "<service>:<namespace>:<base64url(key)>", so any key of
// up to ports.MaxKeyLen bytes (NUL, '/', "..", non-UTF-8 bytes included)
// becomes a distinct item name that cannot escape or alias another key (the
// keyring pass backend, for one, turns "a/../../b" into a path outside its
// prefix). Values are opaque bytes; the Secret Service backend stores them as
// base64 inside a JSON document, so every byte value round-trips.
//
// On the Secret Service, an item in a missing collection, or a missing item
// in a locked collection, does not exist: Get and Delete report
// ports.ErrNotFound there, while reading or removing an existing item of a
// locked collection, and every Set to a locked or missing collection, is
// ports.ErrUnavailable (a headless session dismisses the unlock prompt; a
// desktop shows it, and the call waits for it within Options.Timeout).
//
// On Linux, importing this package never starts a D-Bus daemon: when
// DBUS_SESSION_BUS_ADDRESS is unset and no per-user bus socket
// (/run/user/<uid>/bus) exists, the Secret Service is treated as absent for
// the life of the process (see package internal/busguard).
package keychainstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/99designs/keyring"
	"github.com/mcpward/mcpward/adapters/keychainstore/internal/busguard"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func init() {
	// keyring's init has run (this package imports it): undo the guard's
	// change to the environment so the host's environment is as it was.
	busguard.Restore()
}

// Defaults for Options.
const (
	// DefaultServiceName is the service name used when Options.ServiceName
	// is empty.
	DefaultServiceName = "mcpward"
	// DefaultCollection is the Secret Service collection used when
	// Options.Collection is empty. "login" is the collection a desktop
	// session unlocks at sign-in; the default collection alias would need an
	// interactive prompt in a headless session.
	DefaultCollection = "login"
	// DefaultTimeout bounds each call when Options.Timeout is zero.
	DefaultTimeout = 20 * time.Second
)

// maxNameLen bounds ServiceName, Namespace and Collection.
const maxNameLen = 64

// Options configures a Store. A nil *Options, and every zero field, selects
// the documented default.
type Options struct {
	// ServiceName names the application to the keychain: the first part of
	// every item name, the macOS Keychain service and the Windows
	// credential prefix. Default DefaultServiceName. 1 to 64 bytes of
	// [A-Za-z0-9._-].
	ServiceName string
	// Collection is the Secret Service collection (Linux only). Default
	// DefaultCollection. 1 to 64 bytes of [A-Za-z0-9_].
	Collection string
	// Namespace isolates one set of keys from another under the same
	// service (a host profile, a test). Default "" (no namespace). 0 to 64
	// bytes of [A-Za-z0-9._-].
	Namespace string
	// Timeout bounds each Get, Set and Delete, including waiting for the
	// keychain to answer an unlock prompt and for another call on the same
	// Store to finish. Default DefaultTimeout; negative is invalid.
	Timeout time.Duration
}

// Store is a ports.TokenStore on the OS keychain. Create it with New.
//
// A Store is safe for concurrent use; it makes one keychain call at a time.
// Every Store (in any process) with the same ServiceName, Namespace and
// Collection sees the same items, and a Set is visible to all of them once
// it returns. A Set replaces an item in one keychain call, so a reader sees
// the old value or the new one.
//
// Errors wrap a ports sentinel (use errors.Is) behind a fixed phrase; they
// never contain a key, a value or text from the keychain.
type Store struct {
	cfg      keyring.Config
	prefix   string // "<service>:<namespace>:"
	label    string
	maxValue int
	timeout  time.Duration

	// open opens the keyring; keyring.Open except in tests.
	open func(keyring.Config) (keyring.Keyring, error)

	// sem (capacity 1) serializes keychain calls: keyring's backends are
	// not safe for concurrent use. The goroutine running a call holds it
	// until the call returns, even after the caller gave up waiting.
	sem chan struct{}
	// kr is the opened keyring, nil until a call opens it; guarded by sem.
	kr keyring.Keyring
}

var _ ports.TokenStore = (*Store)(nil)

// New returns a Store configured by opts (nil for the defaults). It does not
// contact the keychain: the keychain is opened by the first call that needs
// it, and an open that fails is retried by the next call, so a keychain that
// is missing or locked is reported as ports.ErrUnavailable by Get, Set or
// Delete. New fails only for invalid options, with a *refusal.Error of Class
// Config and Reason "keychain_options_invalid".
func New(opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ServiceName == "" {
		o.ServiceName = DefaultServiceName
	}
	if o.Collection == "" {
		o.Collection = DefaultCollection
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case !validName(o.ServiceName, 1, isNameByte):
		return nil, optionsError("service name must be 1 to 64 bytes of letters, digits, '.', '_' or '-'")
	case !validName(o.Namespace, 0, isNameByte):
		return nil, optionsError("namespace must be at most 64 bytes of letters, digits, '.', '_' or '-'")
	case !validName(o.Collection, 1, isPathByte):
		return nil, optionsError("collection must be 1 to 64 bytes of letters, digits or '_'")
	case o.Timeout < 0:
		return nil, optionsError("timeout must not be negative")
	}
	return &Store{
		cfg: keyring.Config{
			AllowedBackends:         platformBackends(),
			ServiceName:             o.ServiceName,
			LibSecretCollectionName: o.Collection,
			// macOS: no iCloud sync, readable only while unlocked, and the
			// calling application trusted so every read does not prompt.
			KeychainTrustApplication:       true,
			KeychainSynchronizable:         false,
			KeychainAccessibleWhenUnlocked: true,
			// Windows: credentials are named "<service>:<service>:<item>".
			WinCredPrefix: o.ServiceName,
		},
		prefix:   o.ServiceName + ":" + o.Namespace + ":",
		label:    o.ServiceName,
		maxValue: platformMaxValue,
		timeout:  o.Timeout,
		open:     keyring.Open,
		sem:      make(chan struct{}, 1),
	}, nil
}

// Get returns a copy of the value stored under key: ports.ErrNotFound when
// there is none, ports.ErrInvalidKey, ports.ErrCorrupt (an item exists under
// the key's name but cannot be decoded, or names another key; it is left as
// is) or ports.ErrUnavailable (no keychain, locked, refused, timed out, ctx
// ended).
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	const op = "get"
	if !validKey(key) {
		return nil, invalidKey(op)
	}
	name := s.itemName(key)
	var out []byte
	err := s.do(ctx, op, func(kr keyring.Keyring) error {
		it, err := kr.Get(name)
		if err != nil {
			return mapErr(op, err)
		}
		if it.Key != name {
			return fmt.Errorf("keychainstore: %s: stored item names another key: %w", op, ports.ErrCorrupt)
		}
		out = append(make([]byte, 0, len(it.Data)), it.Data...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Set stores a copy of value under key, replacing any previous value:
// ports.ErrInvalidKey, ports.ErrValueTooLarge (longer than ports.MaxValueLen;
// on Windows, longer than the Credential Manager's 2560 bytes) or
// ports.ErrUnavailable. After an ErrUnavailable caused by a timeout or an
// ended ctx the write may still complete.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	const op = "set"
	if !validKey(key) {
		return invalidKey(op)
	}
	if len(value) > s.maxValue {
		return fmt.Errorf("keychainstore: %s: value exceeds the keychain's size limit: %w", op, ports.ErrValueTooLarge)
	}
	item := keyring.Item{
		Key:                       s.itemName(key),
		Data:                      append(make([]byte, 0, len(value)), value...),
		Label:                     s.label,
		KeychainNotSynchronizable: true,
	}
	return s.do(ctx, op, func(kr keyring.Keyring) error {
		return mapErr(op, kr.Set(item))
	})
}

// Delete removes key: ports.ErrNotFound when there is none,
// ports.ErrInvalidKey or ports.ErrUnavailable. An item that Get reports as
// ports.ErrCorrupt is removed.
func (s *Store) Delete(ctx context.Context, key string) error {
	const op = "delete"
	if !validKey(key) {
		return invalidKey(op)
	}
	name := s.itemName(key)
	return s.do(ctx, op, func(kr keyring.Keyring) error {
		// The Secret Service backend's Remove reports success for a
		// missing item, so look first.
		if _, err := kr.Get(name); err != nil {
			if err := mapErr(op, err); !errors.Is(err, ports.ErrCorrupt) {
				return err
			}
		}
		return mapErr(op, kr.Remove(name))
	})
}

// Clear removes every item of this Store's ServiceName and Namespace (and
// no other item) and returns how many it removed: ports.ErrUnavailable. It
// is for sign-out-everything, uninstall and test cleanup; items of another
// namespace under the same service are left alone. The count includes items
// another handle removed while Clear ran where the backend cannot tell (the
// Secret Service's remove of a missing item succeeds).
func (s *Store) Clear(ctx context.Context) (int, error) {
	const op = "clear"
	n := 0
	err := s.do(ctx, op, func(kr keyring.Keyring) error {
		names, err := kr.Keys()
		if err != nil {
			return mapErr(op, err)
		}
		for _, name := range names {
			if !strings.HasPrefix(name, s.prefix) {
				continue
			}
			if err := kr.Remove(name); err != nil {
				if err := mapErr(op, err); !errors.Is(err, ports.ErrNotFound) {
					return err
				}
				continue
			}
			n++
		}
		return nil
	})
	return n, err
}

// do runs f with the opened keyring on its own goroutine, one call at a time,
// bounded by ctx and s.timeout. It never panics: a panic in keyring (whose
// Secret Service code type-asserts D-Bus replies) becomes ErrUnavailable.
func (s *Store) do(ctx context.Context, op string, f func(keyring.Keyring) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return notAnswered(op, err)
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return notAnswered(op, ctx.Err())
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-s.sem }()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("keychainstore: %s: keychain backend failed: %w", op, ports.ErrUnavailable)
			}
		}()
		kr, err := s.keyring(op)
		if err != nil {
			done <- err
			return
		}
		done <- f(kr)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done: // finished at the same moment: keep the result
			return err
		default:
			return notAnswered(op, ctx.Err())
		}
	}
}

// keyring returns the opened keyring, opening it if needed. The caller holds
// s.sem. A failed open is not remembered.
func (s *Store) keyring(op string) (keyring.Keyring, error) {
	if s.kr != nil {
		return s.kr, nil
	}
	if len(s.cfg.AllowedBackends) == 0 {
		// keyring.Open treats a nil list as "every backend": never call it.
		return nil, fmt.Errorf("keychainstore: %s: no OS keychain on this platform: %w", op, ports.ErrUnavailable)
	}
	kr, err := s.open(s.cfg)
	if err != nil || kr == nil {
		return nil, fmt.Errorf("keychainstore: %s: OS keychain not reachable: %w", op, ports.ErrUnavailable)
	}
	s.kr = kr
	return kr, nil
}

// itemName is the keychain item name of key.
func (s *Store) itemName(key string) string {
	return s.prefix + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// mapErr maps a keyring error to a ports sentinel behind a fixed phrase,
// dropping the keyring's own text.
func mapErr(op string, err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		b64    base64.CorruptInputError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrKeyNotFound):
		return fmt.Errorf("keychainstore: %s: no item for key: %w", op, ports.ErrNotFound)
	case errors.As(err, &syntax), errors.As(err, &typ), errors.As(err, &b64):
		return fmt.Errorf("keychainstore: %s: stored item cannot be decoded: %w", op, ports.ErrCorrupt)
	default:
		return fmt.Errorf("keychainstore: %s: OS keychain refused the call or is locked: %w", op, ports.ErrUnavailable)
	}
}

func notAnswered(op string, ctxErr error) error {
	return fmt.Errorf("keychainstore: %s: OS keychain did not answer in time: %w: %w", op, ports.ErrUnavailable, ctxErr)
}

func invalidKey(op string) error {
	return fmt.Errorf("keychainstore: %s: key is empty or longer than %d bytes: %w", op, ports.MaxKeyLen, ports.ErrInvalidKey)
}

func optionsError(detail string) error {
	e := refusal.New(refusal.Config, "keychain_options_invalid", "")
	e.Detail = detail
	return e
}

func validKey(key string) bool { return key != "" && len(key) <= ports.MaxKeyLen }

func validName(s string, minLen int, ok func(byte) bool) bool {
	if len(s) < minLen || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// isPathByte reports whether c may appear in a D-Bus object path element.
func isPathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// isNameByte reports whether c may appear in a service name or namespace;
// ':' (the item name separator) may not.
func isNameByte(c byte) bool { return isPathByte(c) || c == '.' || c == '-' }
