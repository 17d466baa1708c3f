package raw

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListItemsHaveRoomForTheHint: the page's Items are made with room for
// sizeHint items (the page size asked for), so a page that fills up to
// it appends without growing.
func TestListItemsHaveRoomForTheHint(t *testing.T) {
	item := `{"metadata":{"name":"a"}}`
	for _, tc := range []struct {
		name     string
		body     string
		hint     int
		items    int
		capacity int
	}{
		{"fewer items than hinted", `{"items":[` + item + `,` + item + `]}`, 500, 2, 500},
		{"as many as hinted", `{"items":[` + strings.Repeat(item+`,`, 9) + item + `]}`, 10, 10, 10},
		{"an empty page", `{"items":[]}`, 500, 0, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := (&Decoder{}).DecodeList(strings.NewReader(tc.body), tc.hint)
			require.NoError(t, err)
			require.Len(t, p.Items, tc.items)
			require.Equal(t, tc.capacity, cap(p.Items))
		})
	}
}
