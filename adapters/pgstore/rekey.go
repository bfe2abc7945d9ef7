package pgstore

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mcpward/mcpward/ports"
)

// RekeyReport is what one Rekey pass did.
type RekeyReport struct {
	// Tokens and Approvals count the rows re-sealed under the current key.
	Tokens, Approvals int
	// AuditRecords counts the audit records whose chain MAC was recomputed
	// under the current key (every record after the first one that was
	// under an old key: the chain links them).
	AuditRecords int
	// Unreadable counts the token and approval rows that could not be
	// opened (wrong or missing key, tampered): they are left as they are.
	Unreadable int
	// Remaining counts the rows (the head row included) still under
	// another key than the current one after the pass. An old key may leave the Keyring only once a
	// pass reports 0.
	Remaining int
}

// Rekey is the re-encryption pass of a key rotation: it re-seals every
// token and approval row stored under an older key with the Keyring's
// current key, each row in its own transaction after opening it (a row
// that cannot be opened is counted in Unreadable and never overwritten),
// then, when any audit record or the store's head row is under an older
// key, verifies the whole audit chain and the head and recomputes them
// under the current key in one transaction holding the head (a broken
// chain is left untouched: ReasonAuditChainBroken). Checkpoints taken before a Rekey that changed
// the audit chain no longer verify.
//
// It is safe to run while other Stores read and write (rows written
// meanwhile use the current key already), and to run again. It returns the
// report and, when rows were unreadable, the first such row's error
// (ReasonKeyMismatch, ReasonKeyUnknown, ReasonCorrupt); or ReasonUnavailable,
// ReasonKeyringFailed.
func (s *Store) Rekey(ctx context.Context) (RekeyReport, error) {
	var rep RekeyReport
	cur, err := s.sealerNow(ctx)
	if err != nil {
		return rep, err
	}
	var firstBad error
	bad := func(err error) error {
		if errors.Is(err, ports.ErrCorrupt) {
			rep.Unreadable++
			if firstBad == nil {
				firstBad = err
			}
			return nil
		}
		return err
	}

	// Tokens.
	keys, err := s.collect(ctx, s.q.tokenNotCurrent, cur.id)
	if err != nil {
		return rep, err
	}
	for _, k := range keys {
		key := string(k)
		err := s.inTx(ctx, "rekey", func(tx pgx.Tx) error {
			var (
				id            string
				nonce, sealed []byte
			)
			err := tx.QueryRow(ctx, s.q.tokenGetForUpdate, k).Scan(&id, &nonce, &sealed)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && id == cur.id) {
				return nil // deleted or re-sealed meanwhile
			}
			if err != nil {
				return dbFail(err, "rekey")
			}
			v, err := s.open(ctx, tx, key, id, nonce, sealed)
			if err != nil {
				return err
			}
			n, sl, err := seal(cur, key, v)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.q.tokenReseal, k, cur.id, n, sl); err != nil {
				return dbFail(err, "rekey")
			}
			rep.Tokens++
			return nil
		})
		if err := bad(err); err != nil {
			return rep, err
		}
	}

	// Approvals.
	ids, err := s.collect(ctx, s.q.approvalNotCurrent, cur.id)
	if err != nil {
		return rep, err
	}
	for _, idHash := range ids {
		err := s.inTx(ctx, "rekey", func(tx pgx.Tx) error {
			var (
				record, mac []byte
				id          string
			)
			err := tx.QueryRow(ctx, s.q.approvalGetForUpdate, idHash).Scan(&record, &id, &mac)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && id == cur.id) {
				return nil
			}
			if err != nil {
				return dbFail(err, "rekey")
			}
			if _, err := s.openApproval(ctx, tx, idHash, record, id, mac); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.q.approvalReseal, idHash, cur.id, approvalMAC(cur, idHash, record)); err != nil {
				return dbFail(err, "rekey")
			}
			rep.Approvals++
			return nil
		})
		if err := bad(err); err != nil {
			return rep, err
		}
	}

	// Audit, and the head.
	err = s.inTx(ctx, "rekey", func(tx pgx.Tx) error {
		rep.AuditRecords = 0
		var all []chainRow
		w, err := s.walkChain(ctx, tx, s.q.headForUpdate, func(r chainRow) error {
			all = append(all, r)
			return nil
		})
		if err != nil {
			return err
		}
		start := slices.IndexFunc(all, func(r chainRow) bool { return r.keyID != cur.id })
		if start < 0 && w.sl.id == cur.id {
			return nil
		}
		if start >= 0 {
			prev := w.h.baseMAC
			if start > 0 {
				prev = all[start-1].mac
			}
			for _, r := range all[start:] {
				m := rowMAC(cur, prev, r)
				if _, err := tx.Exec(ctx, s.q.auditRemac, r.seq, cur.id, m); err != nil {
					return dbFail(err, "rekey")
				}
				prev = m
				rep.AuditRecords++
			}
			w.h.mac = prev
		}
		if _, err := tx.Exec(ctx, s.q.headUpdate, w.h.seq, w.h.mac, cur.id, headSum(cur, &w.h, *w.h.apprSeq, w.h.apprDigest)); err != nil {
			return dbFail(err, "rekey")
		}
		return nil
	})
	if err != nil {
		rep.AuditRecords = 0
		return rep, err
	}

	if err := s.pool.QueryRow(ctx, s.q.countNotCurrent, cur.id).Scan(&rep.Remaining); err != nil {
		return rep, dbFail(err, "rekey")
	}
	return rep, firstBad
}

// collect returns the first column of every row of query.
func (s *Store) collect(ctx context.Context, query string, args ...any) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, dbFail(err, "rekey")
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, dbFail(err, "rekey")
	}
	return out, nil
}
