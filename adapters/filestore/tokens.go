package filestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/mcpward/mcpward/ports"
)

// tokenMagic starts every token file (see the package doc for the format).
const tokenMagic = "MCPWTOK1"

// maxTokenFile is the largest well-formed token file.
const maxTokenFile = len(tokenMagic) + 4 + ports.MaxKeyLen + 4 + ports.MaxValueLen + sha256.Size

// encodeToken returns the token file content for key and value.
func encodeToken(key string, value []byte) []byte {
	b := make([]byte, 0, len(tokenMagic)+4+len(key)+4+len(value)+sha256.Size)
	b = append(b, tokenMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	b = append(b, value...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// errBadToken is decodeToken's internal failure; callers map it.
var errBadToken = errors.New("malformed token file")

// decodeToken parses a token file, returning the key and value it holds.
func decodeToken(b []byte) (key string, value []byte, err error) {
	if len(b) < len(tokenMagic)+4+4+sha256.Size || len(b) > maxTokenFile {
		return "", nil, errBadToken
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if want := sha256.Sum256(body); !bytes.Equal(sum, want[:]) {
		return "", nil, errBadToken
	}
	if string(body[:len(tokenMagic)]) != tokenMagic {
		return "", nil, errBadToken
	}
	rest := body[len(tokenMagic):]
	klen := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if klen == 0 || klen > ports.MaxKeyLen || uint64(klen)+4 > uint64(len(rest)) {
		return "", nil, errBadToken
	}
	key, rest = string(rest[:klen]), rest[klen:]
	vlen := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if vlen > ports.MaxValueLen || uint64(vlen) != uint64(len(rest)) {
		return "", nil, errBadToken
	}
	return key, bytes.Clone(rest), nil
}

// Get returns a copy of the value stored under key (an empty value is a
// non-nil empty slice). It returns ErrInvalidKey for an invalid key,
// ErrNotFound when there is none, ErrCorrupt when the key's file exists but
// is unreadable, malformed, or holds another key, and ErrUnavailable when the
// directory cannot be used. ctx is not consulted. Safe for concurrent use.
func (s *Store) Get(_ context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	return s.readToken(key)
}

func (s *Store) readToken(key string) ([]byte, error) {
	data, err := s.readStored(path.Join(tokensDir, keyName(key)), int64(maxTokenFile), "token file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("filestore: token: %w", ports.ErrNotFound)
	}
	if errors.Is(err, errTooLarge) {
		return nil, corrupt("token file malformed")
	}
	if err != nil {
		return nil, err
	}
	stored, value, err := decodeToken(data)
	if err != nil {
		return nil, corrupt("token file malformed")
	}
	if stored != key {
		return nil, corrupt("token file holds another key")
	}
	if value == nil {
		value = []byte{}
	}
	return value, nil
}

// Set stores a copy of value under key atomically (see the package doc),
// replacing a previous value. It returns ErrInvalidKey for an invalid key,
// ErrValueTooLarge when value is longer than ports.MaxValueLen, ErrCorrupt
// when the key's existing file is corrupt (Set never replaces it; Delete
// does), and ErrUnavailable when the directory cannot be written. ctx is not
// consulted. Safe for concurrent use; concurrent Sets of one key leave one of
// the values whole.
func (s *Store) Set(_ context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(value) > ports.MaxValueLen {
		return fmt.Errorf("filestore: value longer than %d bytes: %w", ports.MaxValueLen, ports.ErrValueTooLarge)
	}
	if _, err := s.readToken(key); err != nil && !errors.Is(err, ports.ErrNotFound) {
		return err
	}
	return s.writeAtomic(path.Join(tokensDir, keyName(key)), encodeToken(key, value), "token file")
}

// Delete removes key's file, whatever it holds (an explicit Delete is how a
// caller discards a corrupt value). It returns ErrInvalidKey for an invalid
// key, ErrNotFound when there is none, and ErrUnavailable when the directory
// cannot be written. ctx is not consulted. Safe for concurrent use.
func (s *Store) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := s.root.Remove(path.Join(tokensDir, keyName(key)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("filestore: token: %w", ports.ErrNotFound)
	case err != nil:
		return unavailable("cannot remove token file")
	}
	if err := s.syncDir(tokensDir); err != nil {
		return unavailable("cannot sync token directory")
	}
	return nil
}
