// What to write, as shared/apply-plan.ts plans it: only children missing or differing from the
// desired state, never one someone else controls, nor one that needs a foreign child.
package main

import (
	"math/big"
	"strings"
)

// controlledBy: the first controller reference names this UID (shared/ownership.ts).
func controlledBy(obj M, uid string) bool {
	meta, _ := obj["metadata"].(map[string]interface{})
	refs, _ := meta["ownerReferences"].([]interface{})
	for _, r := range refs {
		ref, _ := r.(map[string]interface{})
		if ref["controller"] == true {
			return uid != "" && ref["uid"] == uid
		}
	}
	return false
}

// ownership is "absent", "ours" or "foreign".
func ownership(obj M, uid string) string {
	if obj == nil {
		return "absent"
	}
	if controlledBy(obj, uid) {
		return "ours"
	}
	return "foreign"
}

func isZero(v interface{}) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return x == ""
	case int64:
		return x == 0
	case int32:
		return x == 0
	case int:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

func asFloat(v interface{}) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// jsEqual is `===` on JSON scalars.
func jsEqual(a, b interface{}) bool {
	if x, ok := asFloat(a); ok {
		y, ok := asFloat(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

func named(items []interface{}) bool {
	for _, i := range items {
		m, ok := i.(map[string]interface{})
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return true
}

// isSubset: every value in desired is present and equal in live (shared/apply-plan.ts).
func isSubset(desired, live interface{}, key string) bool {
	if live == nil && isZero(desired) {
		return true
	}
	switch d := desired.(type) {
	case []interface{}:
		l, ok := live.([]interface{})
		if !ok {
			return false
		}
		if len(d) > 0 && named(d) && named(l) {
			for _, di := range d {
				name := di.(map[string]interface{})["name"]
				var found interface{}
				for _, li := range l {
					if li.(map[string]interface{})["name"] == name {
						found = li
						break
					}
				}
				if !isSubset(di, found, "") {
					return false
				}
			}
			return true
		}
		if len(l) != len(d) {
			return false
		}
		for i := range d {
			if !isSubset(d[i], l[i], "") {
				return false
			}
		}
		return true
	case map[string]interface{}:
		l, ok := live.(map[string]interface{})
		if !ok {
			return false
		}
		quantities := key == "requests" || key == "limits"
		for k, v := range d {
			if quantities {
				if !sameQuantity(v, l[k]) {
					return false
				}
			} else if !isSubset(v, l[k], k) {
				return false
			}
		}
		return true
	}
	return jsEqual(desired, live)
}

var quantitySuffix = map[string][2]*big.Int{}

func init() {
	pow := func(b, e int64) *big.Int { return new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil) }
	one := big.NewInt(1)
	quantitySuffix["n"] = [2]*big.Int{one, pow(10, 9)}
	quantitySuffix["u"] = [2]*big.Int{one, pow(10, 6)}
	quantitySuffix["m"] = [2]*big.Int{one, pow(10, 3)}
	quantitySuffix[""] = [2]*big.Int{one, one}
	for i, s := range []string{"k", "M", "G", "T", "P", "E"} {
		quantitySuffix[s] = [2]*big.Int{pow(10, int64(3*(i+1))), one}
	}
	for i, s := range []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"} {
		quantitySuffix[s] = [2]*big.Int{pow(2, int64(10*(i+1))), one}
	}
}

// quantityValue is shared/quantity.ts's: the exact value of a quantity, or nil.
func quantityValue(q interface{}) *big.Rat {
	var text string
	switch x := q.(type) {
	case string:
		text = x
	default:
		f, ok := asFloat(q)
		if !ok {
			return nil
		}
		text = jsNumber(f)
	}
	m := quantityText.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return nil
	}
	sign, digits, exponent, suffix := m[1], m[2], m[3], m[4]
	_, fraction, _ := strings.Cut(digits, ".")
	magnitude, _ := new(big.Int).SetString(strings.Replace(digits, ".", "", 1), 10)
	num := magnitude
	if sign == "-" {
		num = new(big.Int).Neg(magnitude)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fraction))), nil)
	if exponent != "" {
		e := new(big.Int)
		e.SetString(strings.TrimPrefix(exponent[1:], "+"), 10)
		if e.Sign() >= 0 {
			num.Mul(num, new(big.Int).Exp(big.NewInt(10), e, nil))
		} else {
			den.Mul(den, new(big.Int).Exp(big.NewInt(10), new(big.Int).Neg(e), nil))
		}
	} else {
		f := quantitySuffix[suffix]
		num.Mul(num, f[0])
		den.Mul(den, f[1])
	}
	return new(big.Rat).SetFrac(num, den)
}

func sameQuantity(a, b interface{}) bool {
	x, y := quantityValue(a), quantityValue(b)
	return x != nil && y != nil && x.Cmp(y) == 0
}

func metaOfObj(obj M) M {
	m, _ := obj["metadata"].(map[string]interface{})
	return m
}

func annotationOf(obj M, key string) (string, bool) {
	a, _ := metaOfObj(obj)["annotations"].(map[string]interface{})
	v, ok := a[key].(string)
	return v, ok
}

// childState is "absent", "current", "stale" or "foreign".
func childState(desired, live M, uid string) string {
	if live == nil {
		return "absent"
	}
	if !controlledBy(live, uid) {
		return "foreign"
	}
	want, _ := annotationOf(desired, appliedHashAnnotation)
	got, ok := annotationOf(live, appliedHashAnnotation)
	liveMeta := metaOfObj(live)
	liveLabels, _ := liveMeta["labels"].(map[string]interface{})
	if liveLabels == nil {
		liveLabels = M{}
	}
	same := ok && got == want && isSubset(metaOfObj(desired)["labels"], liveLabels, "labels")
	if same {
		for k, v := range desired {
			if k != "metadata" && !isSubset(v, live[k], k) {
				same = false
				break
			}
		}
	}
	if _, deleting := liveMeta["deletionTimestamp"]; deleting && liveMeta["deletionTimestamp"] != nil {
		same = false
	}
	if same {
		return "current"
	}
	return "stale"
}

var needs = map[string][]string{
	"RoleBinding": {"ServiceAccount", "Role"},
	"Deployment":  {"ServiceAccount", "ConfigMap", "RoleBinding"},
	"Service":     {"Deployment"},
}

// blockedBy is the foreign child that keeps kind from being applied, directly or through what it needs.
func blockedBy(kind string, foreign map[string]bool) string {
	for _, need := range needs[kind] {
		if foreign[need] {
			return need
		}
		if deeper := blockedBy(need, foreign); deeper != "" {
			return deeper
		}
	}
	return ""
}

type applyItem struct {
	object M
	force  bool
}

type applyPlan struct {
	apply     []applyItem
	unchanged []string
	skipped   []string // the reasons
}

func kindOf(obj M) string { s, _ := obj["kind"].(string); return s }

// live maps each desired kind to the object observed (nil: absent); a kind missing from the map was not read.
type liveChildren map[string]M

func foreignKinds(desired []M, live liveChildren, uid string) map[string]bool {
	foreign := map[string]bool{}
	for _, d := range desired {
		if l, read := live[kindOf(d)]; read && l != nil && !controlledBy(l, uid) {
			foreign[kindOf(d)] = true
		}
	}
	return foreign
}

// planApply: absent children are applied without force, so that one someone else creates in the
// meantime conflicts instead of being taken over; stale children this DynamoPoolRelay controls
// are applied with force. Unlike the product, a stale child is not pinned to the resourceVersion
// read: one controller-runtime worker at a time reconciles a key, so no two of ours race.
func planApply(desired []M, live liveChildren, uid string) applyPlan {
	var plan applyPlan
	foreign := foreignKinds(desired, live, uid)
	for _, obj := range desired {
		kind := kindOf(obj)
		name, _ := metaOfObj(obj)["name"].(string)
		state := childState(obj, live[kind], uid)
		blocker := blockedBy(kind, foreign)
		switch {
		case state == "foreign":
			plan.skipped = append(plan.skipped, kind+" "+name+" exists and is not controlled by this DynamoPoolRelay")
		case blocker != "":
			plan.skipped = append(plan.skipped, kind+" "+name+" is not applied: it needs "+blocker+" "+name+", which is not controlled by this DynamoPoolRelay")
		case state == "current":
			plan.unchanged = append(plan.unchanged, kind)
		case state == "stale":
			plan.apply = append(plan.apply, applyItem{obj, true})
		default:
			plan.apply = append(plan.apply, applyItem{obj, false})
		}
	}
	return plan
}

// reflectsDecision: the children read carry the decision (shared/apply-plan.ts).
func reflectsDecision(d Decision, desired []M, live liveChildren, uid string) bool {
	switch d.Action {
	case "reject":
		return true
	case "withdraw":
		svc, read := live["Service"]
		return !read || svc == nil || !controlledBy(svc, uid)
	}
	var observed []M
	for _, obj := range desired {
		if _, read := live[kindOf(obj)]; read {
			observed = append(observed, obj)
		}
	}
	foreign := foreignKinds(observed, live, uid)
	for _, obj := range observed {
		kind := kindOf(obj)
		if !foreign[kind] && blockedBy(kind, foreign) == "" && childState(obj, live[kind], uid) != "current" {
			return false
		}
	}
	return true
}

// foreignChildren: the observed children other than the Service that someone else controls.
func foreignChildren(desired []M, live liveChildren, uid string) []string {
	var out []string
	for _, obj := range desired {
		kind := kindOf(obj)
		if l := live[kind]; kind != "Service" && l != nil && !controlledBy(l, uid) {
			name, _ := metaOfObj(obj)["name"].(string)
			out = append(out, kind+" "+name)
		}
	}
	return out
}
