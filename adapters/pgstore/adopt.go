package pgstore

import (
	"bytes"
	"context"

	"github.com/jackc/pgx/v5"
)

// adopt records, once, the approvals stored when the schema had no
// authenticated state of them (schema version 1, or a new schema) as the
// approvals the store holds: every row that authenticates under the
// Keyring becomes a member of its server's set, and the head gets the
// approvals' state (sequence number 1) and its MAC under cur. A row that
// does not authenticate is left out (List names it as it always did).
//
// It runs under the head's row lock, so Stores opening at the same time
// adopt once. It does nothing when the head already holds the state, and
// refuses to adopt (doing nothing: approvals and audit then fail with
// ReasonRolledBack) when the state is missing although an audit record
// appended while it existed is there — someone removed it, and adopting
// would bless whatever rows are there now.
func (s *Store) adopt(ctx context.Context, cur *sealer) error {
	return s.inTx(ctx, "adopt approvals", func(tx pgx.Tx) error {
		var h head
		if err := tx.QueryRow(ctx, s.q.headForUpdate).Scan(append(h.dests(), &h.beyond)...); err != nil {
			return dbFail(err, "adopt approvals")
		}
		if h.adopted() {
			return nil
		}
		var v2 bool
		if err := tx.QueryRow(ctx, s.q.auditV2Exists).Scan(&v2); err != nil {
			return dbFail(err, "adopt approvals")
		}
		if v2 {
			return nil
		}
		rows, err := tx.Query(ctx, s.q.approvalRowsAll)
		if err != nil {
			return dbFail(err, "adopt approvals")
		}
		type row struct {
			approvalRow
			server []byte
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.idHash, &r.server, &r.record, &r.keyID, &r.mac); err != nil {
				rows.Close()
				return dbFail(err, "adopt approvals")
			}
			all = append(all, r)
		}
		if err := rows.Err(); err != nil {
			return dbFail(err, "adopt approvals")
		}
		sets := map[string]members{}
		for _, r := range all {
			a, err := s.openApproval(ctx, tx, r.idHash, r.record, r.keyID, r.mac)
			if err != nil || !bytes.Equal(serverHash(a.Identity.ServerID), r.server) {
				continue
			}
			sets[string(r.server)] = sets[string(r.server)].with(r.idHash, r.record)
		}
		if _, err := tx.Exec(ctx, s.q.setDeleteAll); err != nil {
			return dbFail(err, "adopt approvals")
		}
		var pairs []setPair
		for server, m := range sets {
			d := m.digest()
			if _, err := tx.Exec(ctx, s.q.setUpsert, []byte(server), []byte(m), d); err != nil {
				return dbFail(err, "adopt approvals")
			}
			pairs = append(pairs, setPair{server: []byte(server), digest: d})
		}
		digest, ok := setsDigest(pairs)
		if !ok {
			return fail(ReasonCorrupt, "the approvals' sets are malformed")
		}
		if _, err := tx.Exec(ctx, s.q.headApprovals, int64(1), digest, cur.id, headSum(cur, &h, 1, digest)); err != nil {
			return dbFail(err, "adopt approvals")
		}
		return nil
	})
}
