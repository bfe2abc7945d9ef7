package pgstore

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
)

// The head row (audit_head) holds the end of the audit chain, its
// retention base, and the approvals' state: a sequence number every grant
// and revoke advances, and the digest of every server's set of approvals
// (approval_sets). head_mac authenticates the whole row under key_id, so
// the row can only be replaced by an older copy of itself — which is
// rolling the store back (see doc.go, Replay).

// head is the head row as read, with whether an audit row lies beyond it.
type head struct {
	seq, baseSeq int64
	mac, baseMAC []byte
	// apprSeq, apprDigest, keyID and headMAC are nil before the approvals
	// were adopted (adopt.go).
	apprSeq    *int64
	apprDigest []byte
	keyID      *string
	headMAC    []byte
	// beyond: an audit row has a sequence number above seq.
	beyond bool
}

// headColumns are the columns scanned by scanHead, from audit_head h.
const headColumns = `h.seq, h.mac, h.base_seq, h.base_mac, h.approvals_seq, h.approvals_digest, h.key_id, h.head_mac`

// headDests returns the scan destinations of headColumns.
func (h *head) dests() []any {
	return []any{&h.seq, &h.mac, &h.baseSeq, &h.baseMAC, &h.apprSeq, &h.apprDigest, &h.keyID, &h.headMAC}
}

// adopted reports whether the head holds the approvals' state.
func (h *head) adopted() bool {
	return h.keyID != nil && h.apprSeq != nil && h.apprDigest != nil && h.headMAC != nil
}

// headSum is the MAC of the head row's content under sl.
func headSum(sl *sealer, h *head, apprSeq int64, apprDigest []byte) []byte {
	return sl.sum([]byte("head"), u64(h.seq), h.mac, u64(h.baseSeq), h.baseMAC, u64(apprSeq), apprDigest)
}

func u64(v int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return b[:]
}

// seen is the newest state a Store has verified: a head older than it is a
// rollback. Its zero value has seen nothing.
type seen struct {
	mu          sync.Mutex
	audit, appr int64
}

// floor returns what was seen so far. A caller takes it before it reads
// the head, so a state another goroutine of this Store committed after the
// read's snapshot never looks like a rollback.
func (s *seen) floor() (audit, appr int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.audit, s.appr
}

// saw records a verified head.
func (s *seen) saw(audit, appr int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit = max(s.audit, audit)
	s.appr = max(s.appr, appr)
}

// verifyHead checks a head read through q after floor was taken: adopted,
// its MAC, no audit row beyond it, not older than floor. It returns the
// sealer of the head's key. A head whose MAC fails is macReason
// (ReasonCorrupt for the approvals, ReasonAuditChainBroken for the audit
// log).
func (s *Store) verifyHead(ctx context.Context, q querier, h *head, floorAudit, floorAppr int64, macReason string) (*sealer, error) {
	if !h.adopted() {
		return nil, fail(ReasonRolledBack, "the approvals' authenticated state is missing")
	}
	sl, err := s.opener(ctx, q, *h.keyID)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(h.headMAC, headSum(sl, h, *h.apprSeq, h.apprDigest)) {
		return nil, fail(macReason, "the store's head row fails authentication (edited or forged)")
	}
	if h.beyond {
		return nil, fail(ReasonRolledBack, "audit records lie beyond the head of the chain")
	}
	if h.seq < floorAudit || *h.apprSeq < floorAppr {
		return nil, fail(ReasonRolledBack, "the store is older than this process saw it")
	}
	return sl, nil
}

// ---- approval sets ----

// entryLen is the length of one member of a set: an approval's id_hash
// and the SHA-256 of its record.
const entryLen = 2 * sha256.Size

// members is a server's set: entries sorted by id_hash, each once.
type members []byte

// validMembers reports whether b is a well-formed set.
func validMembers(b []byte) bool {
	if len(b)%entryLen != 0 {
		return false
	}
	for i := entryLen; i < len(b); i += entryLen {
		if bytes.Compare(b[i-entryLen:i-entryLen+sha256.Size], b[i:i+sha256.Size]) >= 0 {
			return false
		}
	}
	return true
}

// find returns the record hash of idHash, or nil.
func (m members) find(idHash []byte) []byte {
	lo, hi := 0, len(m)/entryLen
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := bytes.Compare(m[mid*entryLen:mid*entryLen+sha256.Size], idHash); {
		case c == 0:
			return m[mid*entryLen+sha256.Size : (mid+1)*entryLen]
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return nil
}

// holds reports whether the row (idHash, record) is the member of idHash.
func (m members) holds(idHash, record []byte) bool {
	h := m.find(idHash)
	if h == nil {
		return false
	}
	r := sha256.Sum256(record)
	return bytes.Equal(h, r[:])
}

// with returns a copy of m with idHash's member set to record's hash.
func (m members) with(idHash, record []byte) members {
	r := sha256.Sum256(record)
	out := make(members, 0, len(m)+entryLen)
	placed := false
	for i := 0; i < len(m); i += entryLen {
		switch c := bytes.Compare(m[i:i+sha256.Size], idHash); {
		case c == 0:
			continue
		case c > 0 && !placed:
			out = append(append(out, idHash...), r[:]...)
			placed = true
		}
		out = append(out, m[i:i+entryLen]...)
	}
	if !placed {
		out = append(append(out, idHash...), r[:]...)
	}
	return out
}

// without returns a copy of m without idHash's member, and whether it had
// one.
func (m members) without(idHash []byte) (members, bool) {
	out := make(members, 0, len(m))
	had := false
	for i := 0; i < len(m); i += entryLen {
		if bytes.Equal(m[i:i+sha256.Size], idHash) {
			had = true
			continue
		}
		out = append(out, m[i:i+entryLen]...)
	}
	return out, had
}

// digest is the SHA-256 of m.
func (m members) digest() []byte {
	d := sha256.Sum256(m)
	return d[:]
}

// setPair is one row of approval_sets as the head's digest covers it.
type setPair struct{ server, digest []byte }

// setsDigest is the digest of every server's set: the SHA-256 of the pairs
// (server hash, set digest) sorted by server hash. ok is false when a pair
// is malformed or a server appears twice.
func setsDigest(pairs []setPair) (d []byte, ok bool) {
	sorted := slices.Clone(pairs)
	slices.SortFunc(sorted, func(a, b setPair) int { return bytes.Compare(a.server, b.server) })
	h := sha256.New()
	h.Write([]byte("mcpward pgstore approval sets v1\x00"))
	for i, p := range sorted {
		if len(p.server) != sha256.Size || len(p.digest) != sha256.Size || i > 0 && bytes.Equal(sorted[i-1].server, p.server) {
			return nil, false
		}
		h.Write(p.server)
		h.Write(p.digest)
	}
	return h.Sum(nil), true
}

// replacePair returns pairs with server's digest set to digest (nil
// removes the server).
func replacePair(pairs []setPair, server, digest []byte) []setPair {
	out := make([]setPair, 0, len(pairs)+1)
	for _, p := range pairs {
		if !bytes.Equal(p.server, server) {
			out = append(out, p)
		}
	}
	if digest != nil {
		out = append(out, setPair{server: server, digest: digest})
	}
	return out
}

// approvalState is the approvals' state read under the head's row lock by
// a writer (Grant, Revoke, RemoveReplayed): verified, with the set of one
// server.
type approvalState struct {
	h      head
	sl     *sealer // the head's key
	pairs  []setPair
	server []byte
	set    members
}

// lockApprovals locks the head row in tx, verifies it and the sets'
// digest, and reads server's set (verified against its digest). Every
// writer of the approvals' state takes this lock first, so the state it
// reads is the one it replaces.
func (s *Store) lockApprovals(ctx context.Context, tx pgx.Tx, server []byte) (*approvalState, error) {
	fa, fp := s.seen.floor()
	st := &approvalState{server: server}
	if err := tx.QueryRow(ctx, s.q.headForUpdate).Scan(append(st.h.dests(), &st.h.beyond)...); err != nil {
		return nil, dbFail(err, "approvals")
	}
	sl, err := s.verifyHead(ctx, tx, &st.h, fa, fp, ReasonCorrupt)
	if err != nil {
		return nil, err
	}
	st.sl = sl
	rows, err := tx.Query(ctx, s.q.setPairs)
	if err != nil {
		return nil, dbFail(err, "approvals")
	}
	for rows.Next() {
		var p setPair
		if err := rows.Scan(&p.server, &p.digest); err != nil {
			rows.Close()
			return nil, dbFail(err, "approvals")
		}
		st.pairs = append(st.pairs, p)
	}
	if err := rows.Err(); err != nil {
		return nil, dbFail(err, "approvals")
	}
	if d, ok := setsDigest(st.pairs); !ok || !bytes.Equal(d, st.h.apprDigest) {
		return nil, fail(ReasonApprovalReplayed, "the approvals' sets are not the ones the store wrote")
	}
	var m []byte
	err = tx.QueryRow(ctx, s.q.setMembers, server).Scan(&m)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if pairDigest(st.pairs, server) != nil {
			return nil, fail(ReasonApprovalReplayed, "a server's set of approvals is missing")
		}
	case err != nil:
		return nil, dbFail(err, "approvals")
	default:
		if !validMembers(m) || !bytes.Equal(members(m).digest(), pairDigest(st.pairs, server)) {
			return nil, fail(ReasonApprovalReplayed, "a server's set of approvals is not the one the store wrote")
		}
		st.set = m
	}
	return st, nil
}

// pairDigest returns server's digest among pairs, or nil.
func pairDigest(pairs []setPair, server []byte) []byte {
	for _, p := range pairs {
		if bytes.Equal(p.server, server) {
			return p.digest
		}
	}
	return nil
}

// commitSet writes server's new set (none when empty) and the head's new
// approvals state (the sequence advanced, the digest, the MAC) in tx.
func (s *Store) commitSet(ctx context.Context, tx pgx.Tx, st *approvalState, set members) error {
	var digest []byte
	if len(set) > 0 {
		digest = set.digest()
		if _, err := tx.Exec(ctx, s.q.setUpsert, st.server, []byte(set), digest); err != nil {
			return dbFail(err, "approvals")
		}
	} else if _, err := tx.Exec(ctx, s.q.setDelete, st.server); err != nil {
		return dbFail(err, "approvals")
	}
	all, ok := setsDigest(replacePair(st.pairs, st.server, digest))
	if !ok {
		return fail(ReasonCorrupt, "the approvals' sets are malformed")
	}
	next := *st.h.apprSeq + 1
	if _, err := tx.Exec(ctx, s.q.headApprovals, next, all, st.sl.id, headSum(st.sl, &st.h, next, all)); err != nil {
		return dbFail(err, "approvals")
	}
	return nil
}
