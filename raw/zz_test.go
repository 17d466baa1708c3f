package raw

import (
	"fmt"
	"testing"
)

func TestZZDebug(t *testing.T) {
	data := []byte("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Apply failed with 1 conflict: con{lict with \\\"deployer\\\": .data.k\",\"reason\":\"Conflict\",\"details\":{\"causes\":[{\"reason\":\"FieldManagerConflict\",\"message\":\"conflict with \\\"deployer\\\"\",\"field\":\".data.k\"}]},\"code\":409}")
	for _, fast := range []bool{true, false} {
		fastBlocks = fast
		s := frameScanner{spans: &spanNotes{level: 2}}
		s.reset()
		off, held := 0, 0
		sizes := []int{113, 64}
		for k := 0; ; k++ {
			end := min(off+held+sizes[k%2], len(data))
			fmt.Printf("feed %d..%d state %d depth %d top %d stack %v\n", off, end, s.state, s.depth, s.top, s.stack[:6])
			n, done := s.feed(data[off:end])
			off += n
			held = end - off
			if done || end == len(data) {
				fmt.Println(s.err, s.errAt)
				break
			}
		}
	}
	fastBlocks = true
}
