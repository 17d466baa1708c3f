package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// printTable writes one row per file of reports: the median of each
// figure over the file's lines, and of each run's ratios against issue
// 29's goals (synced ≥ 5× sooner, ≥ 95% fewer bytes).
func printTable(w io.Writer, files []string) error {
	fmt.Fprintln(w, "| pods | cold: synced | cold: CPU | cold: bytes served | warm: first-ready | warm: synced | warm: CPU | warm: bytes served | synced, cold ÷ warm | CPU, cold ÷ warm | bytes saved | snapshot | stop and save |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range files {
		reps, err := read(name)
		if err != nil {
			return err
		}
		if len(reps) == 0 {
			continue
		}
		med := func(f func(report) float64) float64 {
			v := make([]float64, len(reps))
			for i, r := range reps {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		fmt.Fprintf(w, "| %d | %.0f ms | %.0f ms | %.1f MB | %.0f ms | %.0f ms | %.0f ms | %.0f B | %.1f× | %.1f× | %.1f%% | %.1f MB | %.0f ms |\n",
			reps[0].Cold.Objects,
			med(func(r report) float64 { return r.Cold.SyncedMS }),
			med(func(r report) float64 { return r.Cold.CPUMS }),
			med(func(r report) float64 { return float64(r.Cold.ServedBytes) / 1e6 }),
			med(func(r report) float64 { return r.Warm.FirstReadyMS }),
			med(func(r report) float64 { return r.Warm.SyncedMS }),
			med(func(r report) float64 { return r.Warm.CPUMS }),
			med(func(r report) float64 { return float64(r.Warm.ServedBytes) }),
			med(func(r report) float64 { return r.Cold.SyncedMS / r.Warm.SyncedMS }),
			med(func(r report) float64 { return r.Cold.CPUMS / r.Warm.CPUMS }),
			med(func(r report) float64 { return 100 * (1 - float64(r.Warm.ServedBytes)/float64(r.Cold.ServedBytes)) }),
			med(func(r report) float64 { return float64(r.SnapshotBytes) / 1e6 }),
			med(func(r report) float64 { return r.StopMS }))
	}
	return nil
}

func read(name string) ([]report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var reps []report
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r report
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		reps = append(reps, r)
	}
	return reps, sc.Err()
}
