package pgstore

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/mcpward/mcpward/ports"
)

// checkKey returns ReasonInvalidKey for an empty key or one longer than
// ports.MaxKeyLen bytes.
func checkKey(key string) error {
	if key == "" || len(key) > ports.MaxKeyLen {
		return fail(ReasonInvalidKey, "key empty or longer than 1024 bytes")
	}
	return nil
}

// tokenAAD is the additional data of a token row: the format, the key id
// and the key (the record's identity), each length-prefixed, so a sealed
// value copied to another key's row, or relabelled with another key id,
// fails to open.
func tokenAAD(keyID, key string) []byte {
	var e enc
	e.str("mcpward pgstore v1 token")
	e.str(keyID)
	e.str(key)
	return e.b
}

// seal seals value for key under sl, returning the nonce and ciphertext.
func seal(sl *sealer, key string, value []byte) (nonce, sealed []byte, err error) {
	nonce = make([]byte, sl.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fail(ReasonUnavailable, "no randomness for a nonce")
	}
	return nonce, sl.aead.Seal(nil, nonce, value, tokenAAD(sl.id, key)), nil
}

// open opens a token row of key.
func (s *Store) open(ctx context.Context, q querier, key, keyID string, nonce, sealed []byte) ([]byte, error) {
	sl, err := s.opener(ctx, q, keyID)
	if err != nil {
		return nil, err
	}
	if len(nonce) != sl.aead.NonceSize() {
		return nil, fail(ReasonCorrupt, "a token row is malformed")
	}
	v, err := sl.aead.Open(nil, nonce, sealed, tokenAAD(keyID, key))
	if err != nil {
		return nil, fail(ReasonCorrupt, "a token row fails authentication (edited, moved or forged)")
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// Get returns a copy of the value stored under key (an empty value is a
// non-nil empty slice). It fails with an *Error: ReasonInvalidKey,
// ReasonNotFound, ReasonCorrupt (the row fails authentication: edited,
// moved from another key's row, forged), ReasonKeyUnknown or
// ReasonKeyMismatch (the row's key is missing from the Keyring or wrong),
// ReasonKeyringFailed, ReasonUnavailable. Safe for concurrent use.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var (
		keyID         string
		nonce, sealed []byte
	)
	err := s.pool.QueryRow(ctx, s.q.tokenGet, []byte(key)).Scan(&keyID, &nonce, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fail(ReasonNotFound, "no value under the key")
	}
	if err != nil {
		return nil, dbFail(err, "token read")
	}
	return s.open(ctx, s.pool, key, keyID, nonce, sealed)
}

// Set seals a copy of value under the Keyring's current key and stores it
// under key, replacing a previous value, in one transaction: a reader on
// any machine sees the old value or the new one once Set returns. An
// existing row that cannot be opened is never replaced: Set fails with its
// error (ReasonCorrupt, ReasonKeyUnknown, ReasonKeyMismatch; Delete removes
// it). Other failures: ReasonInvalidKey, ReasonValueTooLarge (longer than
// ports.MaxValueLen), ReasonKeyringFailed, ReasonUnavailable. Safe for
// concurrent use; concurrent Sets of one key leave one value whole.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if len(value) > ports.MaxValueLen {
		return fail(ReasonValueTooLarge, "value longer than 16 KiB")
	}
	sl, err := s.sealerNow(ctx)
	if err != nil {
		return err
	}
	nonce, sealed, err := seal(sl, key, value)
	if err != nil {
		return err
	}
	return s.inTx(ctx, "token write", func(tx pgx.Tx) error {
		var (
			oldID               string
			oldNonce, oldSealed []byte
		)
		err := tx.QueryRow(ctx, s.q.tokenGetForUpdate, []byte(key)).Scan(&oldID, &oldNonce, &oldSealed)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return dbFail(err, "token write")
		default:
			if _, err := s.open(ctx, tx, key, oldID, oldNonce, oldSealed); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.q.tokenUpsert, []byte(key), sl.id, nonce, sealed); err != nil {
			return dbFail(err, "token write")
		}
		return nil
	})
}

// Delete removes key's row, whatever it holds (an explicit Delete is how a
// caller discards a value that cannot be opened). It fails with
// ReasonInvalidKey, ReasonNotFound or ReasonUnavailable. Safe for
// concurrent use.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q.tokenDelete, []byte(key))
	if err != nil {
		return dbFail(err, "token delete")
	}
	if tag.RowsAffected() == 0 {
		return fail(ReasonNotFound, "no value under the key")
	}
	return nil
}

// inTx runs fn in a read-committed transaction, mapping a failure that is
// not already an *Error to ReasonUnavailable.
func (s *Store) inTx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	return s.inTxOpts(ctx, pgx.TxOptions{}, what, fn)
}

func (s *Store) inTxOpts(ctx context.Context, o pgx.TxOptions, what string, fn func(pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, o, fn)
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return dbFail(err, what)
}
