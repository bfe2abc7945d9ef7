package pgstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mcpward/mcpward/ports"
)

// Compile-time proof that *Store tells replayed approvals apart.
var _ ports.ApprovalVerifier = (*Store)(nil)

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

// approvalRow is one approvals row as read.
type approvalRow struct {
	idHash, record, mac []byte
	keyID               string
}

// readState is the approvals' state as one statement read it: the head
// and every server's set digest, verified.
type readState struct {
	h     head
	pairs []setPair
}

// verifyRead verifies what a List or VerifyApprovals statement read: the
// head (taken after floor) and the sets' digest.
func (s *Store) verifyRead(ctx context.Context, st *readState, servers, digests [][]byte, fa, fp int64) error {
	if _, err := s.verifyHead(ctx, s.pool, &st.h, fa, fp, ReasonCorrupt); err != nil {
		return err
	}
	if len(servers) != len(digests) {
		return fail(ReasonCorrupt, "the approvals' sets are malformed")
	}
	for i := range servers {
		st.pairs = append(st.pairs, setPair{server: servers[i], digest: digests[i]})
	}
	if d, ok := setsDigest(st.pairs); !ok || !bytes.Equal(d, st.h.apprDigest) {
		return fail(ReasonApprovalReplayed, "the approvals' sets are not the ones the store wrote")
	}
	return nil
}

// checkSet verifies server's set m (nil when the server has none) against
// the verified pairs.
func checkSet(pairs []setPair, server []byte, m []byte) (members, error) {
	want := pairDigest(pairs, server)
	if m == nil {
		if want != nil {
			return nil, fail(ReasonApprovalReplayed, "a server's set of approvals is missing")
		}
		return nil, nil
	}
	if !validMembers(m) || !bytes.Equal(members(m).digest(), want) {
		return nil, fail(ReasonApprovalReplayed, "a server's set of approvals is not the one the store wrote")
	}
	return m, nil
}

// List returns every approval whose Identity.ServerID equals serverID
// exactly, in grant order (a re-grant counts as new), GrantedAt in UTC; nil,
// nil when there is none. It reads the server's approvals, the store's
// head and every server's set in one statement (one snapshot) and checks
// them all:
//
//   - a row that fails its own authentication (edited, forged, moved):
//     ReasonCorrupt (or ReasonKeyUnknown, ReasonKeyMismatch);
//   - a row that authenticates but is not one of the approvals the store
//     holds now (revoked or replaced, then put back): ReasonApprovalReplayed,
//     naming the server;
//   - a head or set that was changed or restored without the key:
//     ReasonCorrupt, ReasonApprovalReplayed or ReasonRolledBack.
//
// Any of these makes List fail whole and return nothing, so such an
// approval is never matched (fail closed). An approval the store holds
// whose row was deleted is simply not returned (removing never widens
// anything). Other failures: ReasonUnavailable. Safe for concurrent use.
func (s *Store) List(ctx context.Context, serverID string) ([]ports.Approval, error) {
	fa, fp := s.seen.floor()
	var (
		st                      readState
		pairs, set              []byte
		seqs                    []int64
		idHashes, records, macs [][]byte
		keyIDs                  []string
	)
	sh := serverHash(serverID)
	dest := append(st.h.dests(), &st.h.beyond, &pairs, &set, &seqs, &idHashes, &records, &keyIDs, &macs)
	if err := s.pool.QueryRow(ctx, s.q.approvalList, sh).Scan(dest...); err != nil {
		return nil, dbFail(err, "approval list")
	}
	if len(pairs)%entryLen != 0 {
		return nil, fail(ReasonApprovalReplayed, "the approvals' sets are not the ones the store wrote")
	}
	var servers, digests [][]byte
	for i := 0; i < len(pairs); i += entryLen {
		servers = append(servers, pairs[i:i+32])
		digests = append(digests, pairs[i+32:i+entryLen])
	}
	if err := s.verifyRead(ctx, &st, servers, digests, fa, fp); err != nil {
		return nil, err
	}
	m, err := checkSet(st.pairs, sh, set)
	if err != nil {
		return nil, err
	}
	n := len(idHashes)
	if len(seqs) != n || len(records) != n || len(keyIDs) != n || len(macs) != n {
		return nil, fail(ReasonCorrupt, "the approvals are malformed")
	}
	// Grant order: by seq, then identity hash (the aggregates keep the
	// rows aligned, not ordered).
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(seqs[a], seqs[b]); c != 0 {
			return c
		}
		return bytes.Compare(idHashes[a], idHashes[b])
	})
	var out []ports.Approval
	for _, i := range order {
		a, err := s.openApproval(ctx, s.pool, idHashes[i], records[i], keyIDs[i], macs[i])
		if err != nil {
			return nil, err
		}
		if a.Identity.ServerID != serverID {
			return nil, fail(ReasonCorrupt, "an approval row is filed under another server")
		}
		if !m.holds(idHashes[i], records[i]) {
			return nil, failServer(ReasonApprovalReplayed, serverID, "an approval the store does not hold now was put back (revoked or replaced, then re-inserted without the key)")
		}
		out = append(out, a)
	}
	s.seen.saw(st.h.seq, *st.h.apprSeq)
	return out, nil
}

// VerifyApprovals checks every approval row of every server as List checks
// one server's, in one statement: nil when every row is one the store
// holds now; otherwise the first failure found (ReasonApprovalReplayed
// naming its server, ReasonCorrupt, ReasonKeyUnknown, ReasonKeyMismatch,
// ReasonRolledBack), or ReasonUnavailable. It changes nothing. Safe for
// concurrent use.
func (s *Store) VerifyApprovals(ctx context.Context) error {
	fa, fp := s.seen.floor()
	var (
		st                                  readState
		servers, digests, sets              [][]byte
		idHashes, rowServers, records, macs [][]byte
		keyIDs                              []string
	)
	dest := append(st.h.dests(), &st.h.beyond, &servers, &digests, &sets, &idHashes, &rowServers, &records, &keyIDs, &macs)
	if err := s.pool.QueryRow(ctx, s.q.approvalAll).Scan(dest...); err != nil {
		return dbFail(err, "approval verify")
	}
	if err := s.verifyRead(ctx, &st, servers, digests, fa, fp); err != nil {
		return err
	}
	if len(sets) != len(servers) || len(rowServers) != len(idHashes) || len(records) != len(idHashes) ||
		len(keyIDs) != len(idHashes) || len(macs) != len(idHashes) {
		return fail(ReasonCorrupt, "the approvals are malformed")
	}
	bySet := map[string]members{}
	for i, sv := range servers {
		m, err := checkSet(st.pairs, sv, sets[i])
		if err != nil {
			return err
		}
		bySet[string(sv)] = m
	}
	for i := range idHashes {
		a, err := s.openApproval(ctx, s.pool, idHashes[i], records[i], keyIDs[i], macs[i])
		if err != nil {
			return err
		}
		if !bytes.Equal(serverHash(a.Identity.ServerID), rowServers[i]) {
			return fail(ReasonCorrupt, "an approval row is filed under another server")
		}
		if !bySet[string(rowServers[i])].holds(idHashes[i], records[i]) {
			return failServer(ReasonApprovalReplayed, a.Identity.ServerID, "an approval the store does not hold now was put back (revoked or replaced, then re-inserted without the key)")
		}
	}
	s.seen.saw(st.h.seq, *st.h.apprSeq)
	return nil
}

// Grant adds a at the end of the grant order, replacing the approval with
// an identical Identity (every field equal) in one transaction that also
// records a as one of the approvals the store holds now (its server's set,
// the head's approvals state advanced and authenticated). An existing row
// for that identity that fails authentication is never replaced
// (ReasonCorrupt, ReasonKeyUnknown or ReasonKeyMismatch); one that
// authenticates but is not held now (a replayed row) is replaced. A head
// or set changed without the key refuses the grant as List does. Other
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
	sh := serverHash(a.Identity.ServerID)
	var after *approvalState
	err = s.inTx(ctx, "approval grant", func(tx pgx.Tx) error {
		st, err := s.lockApprovals(ctx, tx, sh)
		if err != nil {
			return err
		}
		var (
			oldRecord, oldMAC []byte
			oldID             string
		)
		err = tx.QueryRow(ctx, s.q.approvalGetForUpdate, idHash).Scan(&oldRecord, &oldID, &oldMAC)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return dbFail(err, "approval grant")
		default:
			if _, err := s.openApproval(ctx, tx, idHash, oldRecord, oldID, oldMAC); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.q.approvalUpsert, idHash, sh, record, sl.id, mac); err != nil {
			return dbFail(err, "approval grant")
		}
		after = st
		return s.commitSet(ctx, tx, st, st.set.with(idHash, record))
	})
	if err == nil {
		s.seen.saw(after.h.seq, *after.h.apprSeq+1)
	}
	return err
}

// Revoke removes the approval whose Identity equals id exactly (a row that
// fails authentication included: removing never widens anything), in one
// transaction that also removes it from the approvals the store holds now
// (its server's set, the head's approvals state advanced), so the row put
// back later is refused (ReasonApprovalReplayed). It fails with
// ReasonNotFound when there is no such row; with the refusals of Grant when
// the head or the sets were changed without the key (nothing is removed
// then: the store cannot record the revoke); ReasonUnavailable. Safe for
// concurrent use.
func (s *Store) Revoke(ctx context.Context, id ports.Identity) error {
	idHash := identityHash(id)
	var (
		after   *approvalState
		removed bool
	)
	err := s.inTx(ctx, "approval revoke", func(tx pgx.Tx) error {
		st, err := s.lockApprovals(ctx, tx, serverHash(id.ServerID))
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, s.q.approvalDelete, idHash)
		if err != nil {
			return dbFail(err, "approval revoke")
		}
		removed = tag.RowsAffected() > 0
		set, held := st.set.without(idHash)
		if !held {
			return nil
		}
		after = st
		return s.commitSet(ctx, tx, st, set)
	})
	if err != nil {
		return err
	}
	if after != nil {
		s.seen.saw(after.h.seq, *after.h.apprSeq+1)
	}
	if !removed {
		return fail(ReasonNotFound, "no approval with that identity")
	}
	return nil
}

// RemoveReplayed removes every approval row of serverID that is not one of
// the approvals the store holds now — rows put back after a revoke, rows
// edited or forged — and forgets any approval it holds whose row is gone,
// so what remains is exactly what List returns; it returns how many rows
// it removed. It never removes an approval the store holds now, so it
// never widens anything. It fails, removing nothing, when the head or the
// sets were changed without the key (ReasonCorrupt,
// ReasonApprovalReplayed, ReasonRolledBack: the store cannot tell which
// rows are current), ReasonUnavailable. Safe for concurrent use.
func (s *Store) RemoveReplayed(ctx context.Context, serverID string) (int, error) {
	sh := serverHash(serverID)
	var (
		n     int
		after *approvalState
	)
	err := s.inTx(ctx, "approval repair", func(tx pgx.Tx) error {
		n, after = 0, nil
		st, err := s.lockApprovals(ctx, tx, sh)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, s.q.approvalOfServerForUpdate, sh)
		if err != nil {
			return dbFail(err, "approval repair")
		}
		var all []approvalRow
		for rows.Next() {
			var r approvalRow
			if err := rows.Scan(&r.idHash, &r.record, &r.keyID, &r.mac); err != nil {
				rows.Close()
				return dbFail(err, "approval repair")
			}
			all = append(all, r)
		}
		if err := rows.Err(); err != nil {
			return dbFail(err, "approval repair")
		}
		var keep members
		for _, r := range all {
			if st.set.holds(r.idHash, r.record) {
				if a, err := s.openApproval(ctx, tx, r.idHash, r.record, r.keyID, r.mac); err == nil && a.Identity.ServerID == serverID {
					keep = keep.with(r.idHash, r.record)
					continue
				} else if err != nil && isKeyError(err) {
					return err // a key problem is not the row's fault: keep everything
				}
			}
			if _, err := tx.Exec(ctx, s.q.approvalDelete, r.idHash); err != nil {
				return dbFail(err, "approval repair")
			}
			n++
		}
		if bytes.Equal(keep, st.set) {
			return nil
		}
		after = st
		return s.commitSet(ctx, tx, st, keep)
	})
	if err != nil {
		return 0, err
	}
	if after != nil {
		s.seen.saw(after.h.seq, *after.h.apprSeq+1)
	}
	return n, nil
}
