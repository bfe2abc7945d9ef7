package pgstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"sync"
)

// KeyLen is the length of every key a Keyring holds: 32 bytes (AES-256).
const KeyLen = 32

// MaxKeyIDLen is the longest key id.
const MaxKeyIDLen = 64

// ErrKeyNotInKeyring is what a Keyring's Lookup returns for an id it does not
// hold.
var ErrKeyNotInKeyring = errors.New("pgstore: key id not in keyring")

// Keyring is the host's key port: the keys tokens are sealed with and
// approvals and audit records authenticated with. The host reads them from
// where it keeps secrets (a file only it can read, the OS keychain, a KMS),
// never from a definition, a flag value or the DSN.
//
// A key id is 1 to MaxKeyIDLen bytes of [A-Za-z0-9._-]; it is stored beside
// each row (it is not secret). A key is exactly KeyLen random bytes.
//
// Rotation: make a new key current and keep the old ones in Lookup. New
// writes use the current key; rows sealed under an old key still open.
// Store.Rekey re-seals every row under the current key; once it reports
// nothing left under an old id, that id may be dropped from the Keyring.
//
// Implementations are safe for concurrent use. The Store copies what they
// return and never logs it.
type Keyring interface {
	// Current returns the id and key new data is sealed with.
	Current() (id string, key []byte, err error)
	// Lookup returns the key of id: ErrKeyNotInKeyring when the ring does
	// not hold it.
	Lookup(id string) (key []byte, err error)
}

// StaticKeyring is a Keyring over a fixed set of keys. Make one with
// NewKeyring.
type StaticKeyring struct {
	current string
	keys    map[string][]byte
}

// NewKeyring returns a Keyring whose current key is keys[current] and whose
// Lookup knows every key of keys. It copies keys. It returns an error (no
// key material in it) when current is not in keys, an id is malformed or a
// key is not KeyLen bytes.
func NewKeyring(current string, keys map[string][]byte) (*StaticKeyring, error) {
	if _, ok := keys[current]; !ok {
		return nil, errors.New("pgstore: the current key id is not among the keys")
	}
	k := &StaticKeyring{current: current, keys: make(map[string][]byte, len(keys))}
	for id, key := range maps.All(keys) {
		if !validKeyID(id) {
			return nil, errors.New("pgstore: malformed key id")
		}
		if len(key) != KeyLen {
			return nil, fmt.Errorf("pgstore: a key must be %d bytes", KeyLen)
		}
		k.keys[id] = append([]byte(nil), key...)
	}
	return k, nil
}

// Current returns the current id and a copy of its key.
func (k *StaticKeyring) Current() (string, []byte, error) {
	return k.current, append([]byte(nil), k.keys[k.current]...), nil
}

// Lookup returns a copy of the key of id, or ErrKeyNotInKeyring.
func (k *StaticKeyring) Lookup(id string) ([]byte, error) {
	key, ok := k.keys[id]
	if !ok {
		return nil, ErrKeyNotInKeyring
	}
	return append([]byte(nil), key...), nil
}

// validKeyID reports whether id is 1 to MaxKeyIDLen bytes of [A-Za-z0-9._-].
func validKeyID(id string) bool {
	if id == "" || len(id) > MaxKeyIDLen {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// HKDF labels: one subkey per use, so no key serves two purposes.
const (
	infoSeal  = "mcpward pgstore v1 token seal"
	infoMAC   = "mcpward pgstore v1 record mac"
	infoCheck = "mcpward pgstore v1 key check"
)

// sealer holds what one key of the Keyring derives.
type sealer struct {
	id     string
	keySum [32]byte // sha256 of the key: detects a Keyring changing an id's bytes
	aead   cipher.AEAD
	mac    []byte
	check  []byte // the key check value stored in the keys table
	// checked is set once the keys table holds check for id (see
	// Store.verifyKey); guarded by keys.mu.
	checked bool
}

// derive makes the sealer of id's key.
func derive(id string, key []byte) (*sealer, error) {
	if len(key) != KeyLen {
		return nil, fail(ReasonKeyringFailed, "a key is not 32 bytes")
	}
	sealKey, err := hkdf.Key(sha256.New, key, nil, infoSeal, 32)
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "key derivation failed")
	}
	macKey, err := hkdf.Key(sha256.New, key, nil, infoMAC, 32)
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "key derivation failed")
	}
	checkKey, err := hkdf.Key(sha256.New, key, nil, infoCheck, 32)
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "key derivation failed")
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "key setup failed")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "key setup failed")
	}
	m := hmac.New(sha256.New, checkKey)
	m.Write([]byte("mcpward pgstore key check value"))
	return &sealer{id: id, keySum: sha256.Sum256(key), aead: aead, mac: macKey, check: m.Sum(nil)}, nil
}

// sum returns HMAC-SHA256 of the parts under the sealer's record key; each
// part is length-prefixed, so no two part lists give the same input.
func (s *sealer) sum(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.mac)
	var n [8]byte
	for _, p := range parts {
		putUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil)
}

// keys caches the sealers of a Store, by key id.
type keys struct {
	ring Keyring
	mu   sync.Mutex
	by   map[string]*sealer
}

// current returns the sealer of the Keyring's current key.
func (k *keys) current() (*sealer, error) {
	id, key, err := k.ring.Current()
	if err != nil || !validKeyID(id) {
		return nil, fail(ReasonKeyringFailed, "the keyring has no usable current key")
	}
	return k.get(id, key)
}

// lookup returns the sealer of id: ReasonKeyUnknown when the Keyring does not
// hold it.
func (k *keys) lookup(id string) (*sealer, error) {
	if !validKeyID(id) {
		return nil, fail(ReasonCorrupt, "a row names a malformed key id")
	}
	key, err := k.ring.Lookup(id)
	if errors.Is(err, ErrKeyNotInKeyring) {
		return nil, fail(ReasonKeyUnknown, "a row is sealed under a key id the keyring does not hold")
	}
	if err != nil {
		return nil, fail(ReasonKeyringFailed, "the keyring failed a lookup")
	}
	return k.get(id, key)
}

// get returns the cached sealer of id when its key is unchanged.
func (k *keys) get(id string, key []byte) (*sealer, error) {
	sum := sha256.Sum256(key)
	k.mu.Lock()
	s, ok := k.by[id]
	k.mu.Unlock()
	if ok && s.keySum == sum {
		return s, nil
	}
	s, err := derive(id, key)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.by == nil {
		k.by = map[string]*sealer{}
	}
	k.by[id] = s
	k.mu.Unlock()
	return s, nil
}

func putUint64(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}
