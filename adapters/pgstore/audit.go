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

// auditMAC is the chain MAC of record number seq after prev, for a
// record of schema version 1 (appended before the approvals' state
// existed).
func auditMAC(sl *sealer, prev []byte, seq int64, record []byte) []byte {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(seq))
	return sl.sum([]byte("audit"), prev, n[:], record)
}

// auditMAC2 is the chain MAC of record number seq after prev, appended
// while the approvals' sequence number was apprSeq.
func auditMAC2(sl *sealer, prev []byte, seq int64, record []byte, apprSeq int64) []byte {
	return sl.sum([]byte("audit v2"), prev, u64(seq), record, u64(apprSeq))
}

// rowMAC is the chain MAC of r after prev, in r's format.
func rowMAC(sl *sealer, prev []byte, r chainRow) []byte {
	if r.apprSeq == nil {
		return auditMAC(sl, prev, r.seq, r.record)
	}
	return auditMAC2(sl, prev, r.seq, r.record, *r.apprSeq)
}

// Append adds r at the end of the audit log in one transaction: it locks
// the store's head row (verifying it first), so appends from every process
// and machine are serialized into one chain, and stores r with the MAC of
// (the previous record's MAC, r's sequence number, r, the approvals'
// sequence number) under the current key; the head's MAC is renewed. The
// records enqueued on this Store and not yet written (Enqueue) go first, in
// the same transaction: they share Append's outcome (when it fails they
// are lost, and the next Flush reports it), except when Append fails
// because ctx ended: they then wait for the next write. It fails with
// ReasonAuditChainBroken or ReasonRolledBack when the head was changed or
// rolled back without the key (nothing is appended), ReasonKeyringFailed,
// ReasonKeyMismatch, ReasonKeyUnknown or ReasonUnavailable (also when ctx
// ends while an earlier write of this Store runs). Safe for concurrent
// use: every record is kept whole, each writer's in its order.
func (s *Store) Append(ctx context.Context, r ports.AuditRecord) error {
	record := encodeRecord(r)
	q := s.aq
	select {
	case q.sem <- struct{}{}:
	case <-ctx.Done():
		e := fail(ReasonUnavailable, "audit append: abandoned while waiting for an earlier write")
		e.cause = ctx.Err()
		return e
	}
	defer func() { <-q.sem }()
	queued := q.take()
	err := s.appendRecords(ctx, append(queued, record))
	if err != nil && ctx.Err() != nil {
		// The caller gave up, not the store: the queued records are not
		// its to lose; they wait for the next write, still first.
		q.requeue(queued)
		return err
	}
	q.settle(len(queued), err != nil)
	return err
}

// appendRecords adds records, in order, at the end of the audit log in one
// transaction, as Append describes.
func (s *Store) appendRecords(ctx context.Context, records [][]byte) error {
	sl, err := s.sealerNow(ctx)
	if err != nil {
		return err
	}
	var h head
	err = s.inTx(ctx, "audit append", func(tx pgx.Tx) error {
		fa, fp := s.seen.floor()
		h = head{}
		if err := tx.QueryRow(ctx, s.q.headForUpdate).Scan(append(h.dests(), &h.beyond)...); err != nil {
			return dbFail(err, "audit append")
		}
		hsl, err := s.verifyHead(ctx, tx, &h, fa, fp, ReasonAuditChainBroken)
		if err != nil {
			return err
		}
		for _, record := range records {
			next := h.seq + 1
			m := auditMAC2(sl, h.mac, next, record, *h.apprSeq)
			if _, err := tx.Exec(ctx, s.q.auditInsert, next, record, sl.id, m, *h.apprSeq); err != nil {
				return dbFail(err, "audit append")
			}
			h.seq, h.mac = next, m
		}
		if _, err := tx.Exec(ctx, s.q.headUpdate, h.seq, h.mac, hsl.id, headSum(hsl, &h, *h.apprSeq, h.apprDigest)); err != nil {
			return dbFail(err, "audit append")
		}
		return nil
	})
	if err == nil {
		s.seen.saw(h.seq, *h.apprSeq)
	}
	return err
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
		_, err := s.walkChain(ctx, tx, s.q.head, func(row chainRow) error {
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
		var found bool
		w, err := s.walkChain(ctx, tx, s.q.head, func(r chainRow) error {
			if anchor != nil && r.seq == anchor.Seq {
				found = hmac.Equal(r.mac, anchor.MAC)
			}
			return nil
		})
		if err != nil {
			return err
		}
		base := Checkpoint{Seq: w.h.baseSeq, MAC: w.h.baseMAC}
		head = Checkpoint{Seq: w.h.seq, MAC: w.h.mac}
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
	// apprSeq is the approvals' sequence number the record was appended
	// at; nil for a record of schema version 1.
	apprSeq *int64
}

// walked is a verified chain: its head (and the sealer of the head's key).
type walked struct {
	h  head
	sl *sealer
}

// walkChain verifies the store's head (read through tx by headQuery) and
// the chain from its retention base to its end, calls each (when not nil)
// with every row in order, and returns the head. A record of schema
// version 1 never follows one of version 2, and the approvals' sequence
// numbers never go back. A failure of each stops the walk and is returned.
func (s *Store) walkChain(ctx context.Context, tx pgx.Tx, headQuery string, each func(chainRow) error) (walked, error) {
	fa, fp := s.seen.floor()
	var w walked
	if err := tx.QueryRow(ctx, headQuery).Scan(append(w.h.dests(), &w.h.beyond)...); err != nil {
		return walked{}, dbFail(err, "audit read")
	}
	sl, err := s.verifyHead(ctx, tx, &w.h, fa, fp, ReasonAuditChainBroken)
	if err != nil {
		return walked{}, err
	}
	w.sl = sl
	rows, err := tx.Query(ctx, s.q.auditRows)
	if err != nil {
		return walked{}, dbFail(err, "audit read")
	}
	var all []chainRow
	for rows.Next() {
		var r chainRow
		if err := rows.Scan(&r.seq, &r.record, &r.keyID, &r.mac, &r.apprSeq); err != nil {
			rows.Close()
			return walked{}, dbFail(err, "audit read")
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return walked{}, dbFail(err, "audit read")
	}
	broken := func() error { return fail(ReasonAuditChainBroken, "the audit chain does not verify") }
	prev, want := w.h.baseMAC, w.h.baseSeq+1
	v2, lastAppr := false, int64(0)
	for _, r := range all {
		if r.seq != want {
			return walked{}, broken()
		}
		if r.apprSeq == nil && v2 || r.apprSeq != nil && *r.apprSeq < lastAppr {
			return walked{}, broken()
		}
		rsl, err := s.opener(ctx, tx, r.keyID)
		if err != nil {
			if errors.Is(err, ports.ErrCorrupt) && !isKeyError(err) {
				return walked{}, broken()
			}
			return walked{}, err
		}
		if !hmac.Equal(r.mac, rowMAC(rsl, prev, r)) {
			return walked{}, broken()
		}
		if each != nil {
			if err := each(r); err != nil {
				return walked{}, err
			}
		}
		if r.apprSeq != nil {
			v2, lastAppr = true, *r.apprSeq
		}
		prev, want = r.mac, want+1
	}
	if want-1 != w.h.seq || !hmac.Equal(prev, w.h.mac) || lastAppr > *w.h.apprSeq {
		return walked{}, broken()
	}
	s.seen.saw(w.h.seq, *w.h.apprSeq)
	return w, nil
}

// isKeyError reports a wrong or missing key rather than a bad row.
func isKeyError(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Refusal.Reason == ReasonKeyMismatch || e.Refusal.Reason == ReasonKeyUnknown)
}

// Prune is the audit log's retention: it removes the oldest records
// appended (by the database's clock) before before, as one prefix of the
// chain — it stops at the first record appended at or after before, so the
// records kept are always a contiguous end of the chain — and it always
// keeps the last record (the chain's end, which the head and the
// approvals' state are bound to). The chain is verified first (a broken
// chain is never pruned: ReasonAuditChainBroken); the last removed
// record's sequence number and MAC become the retention base, from which
// Records and Verify check the rest, so the chain stays verifiable. It
// returns the number of records removed. A Checkpoint older than the new
// base can no longer be checked (ReasonCheckpointPruned). Other failures:
// ReasonRolledBack, ReasonKeyUnknown, ReasonKeyMismatch,
// ReasonUnavailable. Safe for concurrent use (it locks the head like
// Append).
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	var removed int64
	err := s.inTx(ctx, "audit prune", func(tx pgx.Tx) error {
		removed = 0
		w, err := s.walkChain(ctx, tx, s.q.headForUpdate, nil)
		if err != nil {
			return err
		}
		var first *int64
		if err := tx.QueryRow(ctx, s.q.auditFirstAfter, before).Scan(&first); err != nil {
			return dbFail(err, "audit prune")
		}
		cut := w.h.seq - 1
		if first != nil {
			cut = min(cut, *first-1)
		}
		if cut <= w.h.baseSeq {
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
		w.h.baseSeq, w.h.baseMAC = cut, mac
		if _, err := tx.Exec(ctx, s.q.headBase, cut, mac, w.sl.id, headSum(w.sl, &w.h, *w.h.apprSeq, w.h.apprDigest)); err != nil {
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
