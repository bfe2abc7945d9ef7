package pgstore

import (
	"context"
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpward/mcpward/ports"
)

// Checkpoint names one point of the audit chain: a record's sequence number
// and its MAC. It holds no secret (the MAC is a keyed hash of the record);
// a host that writes checkpoints somewhere the database's writers cannot
// reach (its own log, another system) can later prove with Verify that the
// chain still contains them, which detects a rollback of the chain's end.
type Checkpoint struct {
	// Seq is the record's position: 1 for the first record ever appended.
	// 0 with an all-zero MAC is the start of an empty chain.
	Seq int64
	// MAC is the record's chain MAC (32 bytes).
	MAC []byte
}

// auditMAC is the chain MAC of record number seq after prev.
func auditMAC(sl *sealer, prev []byte, seq int64, record []byte) []byte {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq))
	return sl.sum([]byte("audit"), prev, n[:], record)
}

// Append adds r at the end of the audit log in one transaction: it locks
// the chain's head row, so appends from every process and machine are
// serialized into one chain, and stores r with the MAC of (the previous
// record's MAC, r's sequence number, r) under the current key. It fails
// with ReasonKeyringFailed, ReasonKeyMismatch or ReasonUnavailable. Safe
// for concurrent use: every record is kept whole, each writer's in its
// order.
func (s *Store) Append(ctx context.Context, r ports.AuditRecord) error {
	sl, err := s.sealerNow(ctx)
	if err != nil {
		return err
	}
	record := encodeRecord(r)
	return s.inTx(ctx, "audit append", func(tx pgx.Tx) error {
		var (
			seq, baseSeq int64
			mac, baseMAC []byte
		)
		if err := tx.QueryRow(ctx, s.q.headForUpdate).Scan(&seq, &mac, &baseSeq, &baseMAC); err != nil {
			return dbFail(err, "audit append")
		}
		next := seq + 1
		m := auditMAC(sl, mac, next, record)
		if _, err := tx.Exec(ctx, s.q.auditInsert, next, record, sl.id, m); err != nil {
			return dbFail(err, "audit append")
		}
		if _, err := tx.Exec(ctx, s.q.headUpdate, next, m); err != nil {
			return dbFail(err, "audit append")
		}
		return nil
	})
}

// Records returns every record kept (those Prune removed excepted) in
// append order, after verifying the whole chain from the retention base to
// the head: a record edited, deleted, inserted or reordered makes it fail
// with ReasonAuditChainBroken and return no record. Other failures:
// ReasonKeyUnknown, ReasonKeyMismatch, ReasonUnavailable. It reads one
// consistent snapshot. Safe for concurrent use.
func (s *Store) Records(ctx context.Context) ([]ports.AuditRecord, error) {
	var out []ports.AuditRecord
	err := s.inTxOpts(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, "audit read", func(tx pgx.Tx) error {
		var base Checkpoint
		_, err := s.walkChain(ctx, tx, s.q.head, &base, func(row chainRow) error {
			r, err := decodeRecord(row.record)
			if err != nil {
				return fail(ReasonCorrupt, "an audit record is malformed")
			}
			out = append(out, r)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Verify verifies the audit chain from the retention base to the head, as
// Records does, without decoding the records, and returns the head's
// Checkpoint. With anchor non-nil it also checks that the chain holds
// anchor (a Checkpoint an earlier Verify returned, kept elsewhere): at or
// before the head, with the same MAC. It fails with ReasonAuditChainBroken
// (the chain or the anchor does not verify), ReasonCheckpointPruned (the
// anchor is older than the retention base, so it can no longer be
// checked), ReasonKeyUnknown, ReasonKeyMismatch, ReasonUnavailable.
func (s *Store) Verify(ctx context.Context, anchor *Checkpoint) (Checkpoint, error) {
	var head Checkpoint
	err := s.inTxOpts(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, "audit verify", func(tx pgx.Tx) error {
		var (
			base  Checkpoint
			found bool
		)
		h, err := s.walkChain(ctx, tx, s.q.head, &base, func(r chainRow) error {
			if anchor != nil && r.seq == anchor.Seq {
				found = hmac.Equal(r.mac, anchor.MAC)
			}
			return nil
		})
		if err != nil {
			return err
		}
		head = h
		if anchor == nil {
			return nil
		}
		switch {
		case anchor.Seq < base.Seq:
			return fail(ReasonCheckpointPruned, "the checkpoint is older than the retention base")
		case anchor.Seq == base.Seq:
			if !hmac.Equal(anchor.MAC, base.MAC) {
				return fail(ReasonAuditChainBroken, "the checkpoint is not in the audit chain")
			}
		case !found:
			return fail(ReasonAuditChainBroken, "the checkpoint is not in the audit chain")
		}
		return nil
	})
	if err != nil {
		return Checkpoint{}, err
	}
	return head, nil
}

// chainRow is one audit row, verified.
type chainRow struct {
	seq         int64
	record, mac []byte
	keyID       string
}

// walkChain verifies the chain read through tx (the head by headQuery),
// sets *base to the retention base, calls each (when not nil) with every
// row in order, and returns the head. A failure of each stops the walk and
// is returned.
func (s *Store) walkChain(ctx context.Context, tx pgx.Tx, headQuery string, base *Checkpoint, each func(chainRow) error) (Checkpoint, error) {
	var head Checkpoint
	if err := tx.QueryRow(ctx, headQuery).Scan(&head.Seq, &head.MAC, &base.Seq, &base.MAC); err != nil {
		return Checkpoint{}, dbFail(err, "audit read")
	}
	rows, err := tx.Query(ctx, s.q.auditRows)
	if err != nil {
		return Checkpoint{}, dbFail(err, "audit read")
	}
	var all []chainRow
	for rows.Next() {
		var r chainRow
		if err := rows.Scan(&r.seq, &r.record, &r.keyID, &r.mac); err != nil {
			rows.Close()
			return Checkpoint{}, dbFail(err, "audit read")
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return Checkpoint{}, dbFail(err, "audit read")
	}
	broken := func() error { return fail(ReasonAuditChainBroken, "the audit chain does not verify") }
	prev, want := base.MAC, base.Seq+1
	for _, r := range all {
		if r.seq != want {
			return Checkpoint{}, broken()
		}
		sl, err := s.opener(ctx, tx, r.keyID)
		if err != nil {
			if errors.Is(err, ports.ErrCorrupt) && !isKeyError(err) {
				return Checkpoint{}, broken()
			}
			return Checkpoint{}, err
		}
		if !hmac.Equal(r.mac, auditMAC(sl, prev, r.seq, r.record)) {
			return Checkpoint{}, broken()
		}
		if each != nil {
			if err := each(r); err != nil {
				return Checkpoint{}, err
			}
		}
		prev, want = r.mac, want+1
	}
	if want-1 != head.Seq || !hmac.Equal(prev, head.MAC) {
		return Checkpoint{}, broken()
	}
	return head, nil
}

// isKeyError reports a wrong or missing key rather than a bad row.
func isKeyError(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Refusal.Reason == ReasonKeyMismatch || e.Refusal.Reason == ReasonKeyUnknown)
}

// Prune is the audit log's retention: it removes the oldest records
// appended (by the database's clock) before before, as one prefix of the
// chain — it stops at the first record appended at or after before, so the
// records kept are always a contiguous end of the chain. The chain is
// verified first (a broken chain is never pruned: ReasonAuditChainBroken);
// the last removed record's sequence number and MAC become the retention
// base, from which Records and Verify check the rest, so the chain stays
// verifiable. It returns the number of records removed. A Checkpoint older
// than the new base can no longer be checked (ReasonCheckpointPruned).
// Other failures: ReasonKeyUnknown, ReasonKeyMismatch, ReasonUnavailable.
// Safe for concurrent use (it locks the head like Append).
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	var removed int64
	err := s.inTx(ctx, "audit prune", func(tx pgx.Tx) error {
		var base Checkpoint
		head, err := s.walkChain(ctx, tx, s.q.headForUpdate, &base, nil)
		if err != nil {
			return err
		}
		var first *int64
		if err := tx.QueryRow(ctx, s.q.auditFirstAfter, before).Scan(&first); err != nil {
			return dbFail(err, "audit prune")
		}
		cut := head.Seq
		if first != nil {
			cut = *first - 1
		}
		if cut <= base.Seq {
			return nil
		}
		var mac []byte
		if err := tx.QueryRow(ctx, s.q.auditMacAt, cut).Scan(&mac); err != nil {
			return dbFail(err, "audit prune")
		}
		tag, err := tx.Exec(ctx, s.q.auditDeleteUpTo, cut)
		if err != nil {
			return dbFail(err, "audit prune")
		}
		if _, err := tx.Exec(ctx, s.q.headBase, cut, mac); err != nil {
			return dbFail(err, "audit prune")
		}
		removed = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}
