package pgstore

import (
	"bytes"
	"context"
	"crypto/hmac"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/mcpward/mcpward/ports"
)

// approvalMAC authenticates an approval row: its identity hash (the row's
// key) and its record, under the record key of sl.
func approvalMAC(sl *sealer, idHash, record []byte) []byte {
	return sl.sum([]byte("approval"), idHash, record)
}

// openApproval checks an approval row and decodes it. A row whose MAC does
// not verify, whose record does not decode, or whose identity does not hash
// to its row key is ReasonCorrupt.
func (s *Store) openApproval(ctx context.Context, q querier, idHash, record []byte, keyID string, mac []byte) (ports.Approval, error) {
	sl, err := s.opener(ctx, q, keyID)
	if err != nil {
		return ports.Approval{}, err
	}
	if !hmac.Equal(mac, approvalMAC(sl, idHash, record)) {
		return ports.Approval{}, fail(ReasonCorrupt, "an approval row fails authentication (edited, moved or forged)")
	}
	a, err := decodeApproval(record)
	if err != nil || !bytes.Equal(identityHash(a.Identity), idHash) {
		return ports.Approval{}, fail(ReasonCorrupt, "an approval row is malformed")
	}
	return a, nil
}

// List returns every approval whose Identity.ServerID equals serverID
// exactly, in grant order (a re-grant counts as new), GrantedAt in UTC; nil,
// nil when there is none. Every row is authenticated: one that fails makes
// List fail with ReasonCorrupt (or ReasonKeyUnknown, ReasonKeyMismatch) and
// return nothing, so a forged or edited approval is never matched. Other
// failures: ReasonUnavailable. Safe for concurrent use.
func (s *Store) List(ctx context.Context, serverID string) ([]ports.Approval, error) {
	rows, err := s.pool.Query(ctx, s.q.approvalList, serverHash(serverID))
	if err != nil {
		return nil, dbFail(err, "approval list")
	}
	type row struct {
		idHash, record, mac []byte
		keyID               string
	}
	var raw []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.idHash, &r.record, &r.keyID, &r.mac); err != nil {
			rows.Close()
			return nil, dbFail(err, "approval list")
		}
		raw = append(raw, r)
	}
	if err := rows.Err(); err != nil {
		return nil, dbFail(err, "approval list")
	}
	var out []ports.Approval
	for _, r := range raw {
		a, err := s.openApproval(ctx, s.pool, r.idHash, r.record, r.keyID, r.mac)
		if err != nil {
			return nil, err
		}
		if a.Identity.ServerID != serverID {
			return nil, fail(ReasonCorrupt, "an approval row is filed under another server")
		}
		out = append(out, a)
	}
	return out, nil
}

// Grant adds a at the end of the grant order, replacing the approval with
// an identical Identity (every field equal) in one transaction. An
// existing row for that identity that fails authentication is never
// replaced (ReasonCorrupt, ReasonKeyUnknown or ReasonKeyMismatch). Other
// failures: ReasonKeyringFailed, ReasonUnavailable. Safe for concurrent use
// across goroutines, processes and machines: no grant or revoke is lost.
func (s *Store) Grant(ctx context.Context, a ports.Approval) error {
	sl, err := s.sealerNow(ctx)
	if err != nil {
		return err
	}
	record := encodeApproval(a)
	idHash := identityHash(a.Identity)
	mac := approvalMAC(sl, idHash, record)
	return s.inTx(ctx, "approval grant", func(tx pgx.Tx) error {
		var (
			oldRecord, oldMAC []byte
			oldID             string
		)
		err := tx.QueryRow(ctx, s.q.approvalGetForUpdate, idHash).Scan(&oldRecord, &oldID, &oldMAC)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return dbFail(err, "approval grant")
		default:
			if _, err := s.openApproval(ctx, tx, idHash, oldRecord, oldID, oldMAC); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.q.approvalUpsert, idHash, serverHash(a.Identity.ServerID), record, sl.id, mac); err != nil {
			return dbFail(err, "approval grant")
		}
		return nil
	})
}

// Revoke removes the approval whose Identity equals id exactly (a row that
// fails authentication included: removing never widens anything). It
// fails with ReasonNotFound when there is none, ReasonUnavailable. Safe for
// concurrent use.
func (s *Store) Revoke(ctx context.Context, id ports.Identity) error {
	tag, err := s.pool.Exec(ctx, s.q.approvalDelete, identityHash(id))
	if err != nil {
		return dbFail(err, "approval revoke")
	}
	if tag.RowsAffected() == 0 {
		return fail(ReasonNotFound, "no approval with that identity")
	}
	return nil
}
