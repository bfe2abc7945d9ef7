package pgstore

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// Approvals and audit records are stored as one binary record each: a
// version byte, then every field in a fixed order, each string as a uvarint
// length and its bytes, each time as int64 Unix seconds and int32
// nanoseconds. Every byte string round-trips (NUL and invalid UTF-8
// included) and every instant round-trips to the nanosecond, in UTC.

const (
	approvalFormat byte = 1
	auditFormat    byte = 1
)

// maxField bounds one decoded string, so a forged length cannot make a
// decoder allocate without bound (a row is read whole anyway).
const maxField = 1 << 24

var errMalformed = errors.New("malformed record")

type enc struct{ b []byte }

func (e *enc) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *enc) time(t time.Time) {
	e.b = binary.BigEndian.AppendUint64(e.b, uint64(t.Unix()))
	e.b = binary.BigEndian.AppendUint32(e.b, uint32(t.Nanosecond()))
}

func (e *enc) identity(id ports.Identity) {
	e.str(id.ServerID)
	e.str(string(id.Tier))
	e.str(id.Origin)
	e.str(id.Fingerprint)
	e.str(id.Security)
	e.str(id.Repository)
	e.str(id.Generation)
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) str() string {
	if d.err != nil {
		return ""
	}
	n, k := binary.Uvarint(d.b)
	// Only the shortest (canonical) length encoding is accepted, so one
	// record has one encoding.
	if k <= 0 || k != len(binary.AppendUvarint(nil, n)) || n > maxField || n > uint64(len(d.b)-k) {
		d.err = errMalformed
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *dec) time() time.Time {
	if d.err != nil {
		return time.Time{}
	}
	if len(d.b) < 12 {
		d.err = errMalformed
		return time.Time{}
	}
	sec := int64(binary.BigEndian.Uint64(d.b))
	nsec := binary.BigEndian.Uint32(d.b[8:])
	d.b = d.b[12:]
	t := time.Unix(sec, int64(nsec)).UTC()
	if nsec >= 1e9 || t.Unix() != sec {
		d.err = errMalformed
		return time.Time{}
	}
	return t
}

func (d *dec) identity() ports.Identity {
	return ports.Identity{
		ServerID:    d.str(),
		Tier:        ports.Tier(d.str()),
		Origin:      d.str(),
		Fingerprint: d.str(),
		Security:    d.str(),
		Repository:  d.str(),
		Generation:  d.str(),
	}
}

// done fails unless the whole input was read.
func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errMalformed
	}
	return d.err
}

// identityBytes is the canonical encoding of an identity.
func identityBytes(id ports.Identity) []byte {
	var e enc
	e.identity(id)
	return e.b
}

// identityHash is the approvals table's key: the SHA-256 of the canonical
// encoding, so two identities share a row only when every field is equal.
func identityHash(id ports.Identity) []byte {
	s := sha256.Sum256(identityBytes(id))
	return s[:]
}

// serverHash is the indexed form of a server id.
func serverHash(server string) []byte {
	s := sha256.Sum256([]byte(server))
	return s[:]
}

func encodeApproval(a ports.Approval) []byte {
	e := enc{b: []byte{approvalFormat}}
	e.identity(a.Identity)
	e.time(a.GrantedAt)
	e.str(a.GrantedBy)
	return e.b
}

func decodeApproval(b []byte) (ports.Approval, error) {
	if len(b) == 0 || b[0] != approvalFormat {
		return ports.Approval{}, errMalformed
	}
	d := dec{b: b[1:]}
	a := ports.Approval{Identity: d.identity(), GrantedAt: d.time(), GrantedBy: d.str()}
	return a, d.done()
}

func encodeRecord(r ports.AuditRecord) []byte {
	e := enc{b: []byte{auditFormat}}
	e.time(r.Time)
	e.str(string(r.Action))
	e.identity(r.Identity)
	e.str(r.Outcome)
	e.str(r.Reason)
	e.str(r.Actor)
	return e.b
}

func decodeRecord(b []byte) (ports.AuditRecord, error) {
	if len(b) == 0 || b[0] != auditFormat {
		return ports.AuditRecord{}, errMalformed
	}
	d := dec{b: b[1:]}
	r := ports.AuditRecord{
		Time:     d.time(),
		Action:   ports.AuditAction(d.str()),
		Identity: d.identity(),
		Outcome:  d.str(),
		Reason:   d.str(),
		Actor:    d.str(),
	}
	return r, d.done()
}
