package apiserve_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/apiserve"
)

// Decision 40: a client listing JSON after media types the core cannot
// write gets JSON; one asking for a Table gets one; one asking only for
// what the core cannot write gets the real server's 406.
func TestNegotiatePicksWhatTheCoreWrites(t *testing.T) {
	for _, tc := range []struct {
		accept  string
		want    apiserve.Output
		refused bool
	}{
		{accept: "", want: apiserve.Output{}},
		{accept: "application/json", want: apiserve.Output{}},
		{accept: "*/*", want: apiserve.Output{}},
		{accept: "application/vnd.kubernetes.protobuf,application/json", want: apiserve.Output{}},
		{accept: "application/cbor, application/json;q=0.9", want: apiserve.Output{}},
		{accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
			want: apiserve.Output{Table: true, TableVersion: "v1"}},
		{accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io", want: apiserve.Output{Table: true, TableVersion: "v1beta1"}},
		// The more specific clause wins at equal quality, as goautoneg sorts.
		{accept: "application/json, application/json;as=Table;v=v1;g=meta.k8s.io", want: apiserve.Output{Table: true, TableVersion: "v1"}},
		{accept: "application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io;q=0.1", want: apiserve.Output{}},
		// A conversion the core does not make is passed over.
		{accept: "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json", want: apiserve.Output{}},
		{accept: "application/json;as=Table;v=v2;g=meta.k8s.io", refused: true},
		{accept: "application/vnd.kubernetes.protobuf", refused: true},
		{accept: "application/yaml", refused: true},
		{accept: "application/json;q=0", refused: true},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			out, err := apiserve.Negotiate(tc.accept)
			if tc.refused {
				require.NotNil(t, err)
				require.Equal(t, http.StatusNotAcceptable, err.Code)
				require.Equal(t, "NotAcceptable", err.Reason)
				require.Equal(t, "only the following media types are accepted: application/json", err.Message)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.want, out)
		})
	}
}

// Decision 40: a body the core cannot read is the real server's 415,
// naming what it reads.
func TestCheckBodyRefusesWhatItCannotRead(t *testing.T) {
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8"} {
		require.Nil(t, apiserve.CheckBody(ct), ct)
	}
	for _, ct := range []string{"application/vnd.kubernetes.protobuf", "application/cbor", "application/yaml", "text/plain", "garbage;;"} {
		err := apiserve.CheckBody(ct)
		require.NotNil(t, err, ct)
		require.Equal(t, http.StatusUnsupportedMediaType, err.Code)
		require.Equal(t, "UnsupportedMediaType", err.Reason)
		require.Equal(t, "the body of the request was in an unknown format - accepted media types include: application/json", err.Message)
	}
}

func TestParseIncludeObject(t *testing.T) {
	for in, want := range map[string]apiserve.IncludeObject{"": apiserve.IncludeMetadata, "Metadata": apiserve.IncludeMetadata, "Object": apiserve.IncludeWhole, "None": apiserve.IncludeNone} {
		got, err := apiserve.ParseIncludeObject(in)
		require.Nil(t, err)
		require.Equal(t, want, got)
	}
	_, err := apiserve.ParseIncludeObject("object")
	require.NotNil(t, err)
	require.Equal(t, http.StatusBadRequest, err.Code)
	require.Equal(t, `unrecognized includeObject value: "object"`, err.Message)
}
