package measure

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCounterClosesOnTheExpectedCounts(t *testing.T) {
	c := NewCounter(2, 1)
	c.Add()
	select {
	case <-c.addsDone:
		t.Fatal("adds done after 1 of 2")
	default:
	}
	c.Add()
	<-c.addsDone
	c.Update()
	<-c.updatesDone
	c.Add() // more than expected must not close twice
	c.Update()
}

func TestCounterWithoutUpdates(t *testing.T) {
	<-NewCounter(1, 0).updatesDone
}

func TestProcessReadings(t *testing.T) {
	require.Positive(t, PeakRSS())
	require.GreaterOrEqual(t, CPUSeconds(), 0.0)
	alloc, inuse := Heap()
	require.Positive(t, alloc)
	require.GreaterOrEqual(t, inuse, alloc)
}

func TestTriggerReportsRefusal(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
	}))
	defer ts.Close()
	require.ErrorContains(t, Trigger(context.Background(), ts.URL), "409")
}

func TestGetInfoRejectsEmptyDataSet(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"pods":0}`))
	}))
	defer ts.Close()
	_, err := GetInfo(context.Background(), ts.URL)
	require.ErrorContains(t, err, "no pods")
}
