package shard

import (
	"hash/fnv"
	"slices"
	"strings"
)

// Owner returns the member that owns key among members, by rendezvous
// (highest-random-weight) hashing: each member scores the key, the highest
// score wins, ties go to the smaller name. When a member joins or leaves,
// only the keys it wins or won change owner. Owner returns "" when members
// is empty. Every replica computes the same owner from the same set.
func Owner(key string, members []string) string {
	hk := hash(key)
	var best string
	var top uint64
	for _, m := range members {
		s := mix(hk ^ hash(m))
		if best == "" || s > top || (s == top && m < best) {
			best, top = m, s
		}
	}
	return best
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix is SplitMix64's finaliser: FNV alone leaves the scores of similar
// names correlated, which would skew the split.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// membersSeparator joins the identities in MembersAnnotation.
const membersSeparator = ","

// formatMembers and parseMembers are the MembersAnnotation's format: the
// sorted identities joined by commas; "" is no member.
func formatMembers(members []string) string { return strings.Join(members, membersSeparator) }

func parseMembers(s string) []string {
	if s == "" {
		return nil
	}
	ms := strings.Split(s, membersSeparator)
	slices.Sort(ms)
	return ms
}
