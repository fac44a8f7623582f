package store

import (
	"fmt"
	"testing"
)

func TestTruthRoundTrip(t *testing.T) {
	db, _ := open(t)
	lost := []LostCharge{
		{Lib: "gorilla", Slot: 0, Group: "g", Stream: "btcusdt@trade", Lost: 12, Library: 2, Source: 10, Gaps: [][2]int64{{10, 19}, {30, 31}}},
		{Lib: "gws", Slot: 0, Group: "g", Stream: "btcusdt@trade"},
	}
	dials := []SlotDials{{Lib: "gws", Slot: 0, Group: "g", Dials: 4, DialFails: 2, Statuses: map[string]int64{"429": 1, "404": 1}, Unrepairable: true}}
	for range 2 { // saving again replaces
		if err := db.SaveTruth(lost, dials); err != nil {
			t.Fatal(err)
		}
	}
	gotL, err := db.LostCharges()
	if err != nil {
		t.Fatal(err)
	}
	gotD, err := db.SlotDialAccounts()
	if err != nil {
		t.Fatal(err)
	}
	lost[1].Gaps = [][2]int64{} // stored as []
	if fmt.Sprint(gotL) != fmt.Sprint(lost) || fmt.Sprint(gotD) != fmt.Sprint(dials) {
		t.Errorf("got %+v %+v\nwant %+v %+v", gotL, gotD, lost, dials)
	}
}
