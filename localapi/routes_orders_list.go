package localapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
)

// The order listing, GET /v1/orders: the calling key's orders, newest first, a
// page at a time.

// orderLister is the part of the engine the listing needs; *engine.Engine has it.
// The route is left out for an engine without it.
type orderLister interface {
	Orders(ctx context.Context, owner string, limit int) ([]core.OrderSummary, error)
}

// Page sizes of the listing.
const (
	defaultOrdersLimit = 50
	maxOrdersLimit     = 200
)

// ordersPage is the answer of GET /v1/orders.
type ordersPage struct {
	Orders []core.OrderSummary `json:"orders"`
	// NextCursor, when present, fetches the next page (older orders) as ?cursor=.
	NextCursor string `json:"nextCursor,omitempty"`
}

var orderStatuses = []core.OrderStatus{
	core.OrderPending, core.OrderRunning, core.OrderCompleted,
	core.OrderFailed, core.OrderCancelled, core.OrderExpired,
}

func ordersListRoute(s *Server) (Route, bool) {
	lister, ok := s.deps.Engine.(orderLister)
	if !ok {
		return Route{}, false
	}
	names := make([]string, len(orderStatuses))
	for i, st := range orderStatuses {
		names[i] = string(st)
	}
	return Route{
		Method: http.MethodGet, Path: "/v1/orders",
		Summary: "List the key's orders",
		Description: "The calling key's orders, newest first (batch scenes included), a page at a time: " +
			"nextCursor, when present, fetches the next (older) page as ?cursor=. A cursor stays valid while " +
			"orders are added: new orders go to the front, so pages never repeat or skip one. An extension of the interface.",
		Query: []Param{
			{Name: "limit", Description: fmt.Sprintf("orders per page, 1 to %d (default %d)", maxOrdersLimit, defaultOrdersLimit),
				Schema: Schema{"type": "integer", "minimum": 1, "maximum": maxOrdersLimit, "default": defaultOrdersLimit}},
			{Name: "cursor", Description: "nextCursor of the previous page", Schema: Schema{"type": "string"}},
			{Name: "status", Description: "only orders in these states, comma-separated: " + strings.Join(names, ", "),
				Schema: Schema{"type": "string"}},
			{Name: "batch", Description: "only the scenes of this batch (its id)", Schema: Schema{"type": "string", "format": "uuid"}},
		},
		Response: ordersPage{},
		Handle: func(r *http.Request) (int, any, error) {
			return s.listOrders(r, lister)
		},
	}, true
}

func (s *Server) listOrders(r *http.Request, lister orderLister) (int, any, error) {
	q := r.URL.Query()
	if err := onlyQuery(q, "limit", "cursor", "status", "batch"); err != nil {
		return 0, nil, err
	}
	limit := defaultOrdersLimit
	if v := strings.TrimSpace(q.Get("limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxOrdersLimit {
			return 0, nil, core.Invalid("limit", "must be an integer from 1 to %d, got %q", maxOrdersLimit, clipQuery(v))
		}
		limit = n
	}
	var statuses []core.OrderStatus
	if v := strings.TrimSpace(q.Get("status")); v != "" {
		for _, part := range strings.Split(v, ",") {
			st := core.OrderStatus(strings.ToLower(strings.TrimSpace(part)))
			if !slices.Contains(orderStatuses, st) {
				return 0, nil, core.Invalid("status", "unknown order status %q; one of pending, running, completed, failed, cancelled, expired", clipQuery(part))
			}
			statuses = append(statuses, st)
		}
	}
	batch := strings.ToLower(strings.TrimSpace(q.Get("batch")))
	var after *orderCursor
	if v := strings.TrimSpace(q.Get("cursor")); v != "" {
		c, err := parseOrderCursor(v)
		if err != nil {
			return 0, nil, err
		}
		after = &c
	}
	all, err := lister.Orders(r.Context(), Owner(r), 0)
	if err != nil {
		return 0, nil, err
	}
	page := ordersPage{Orders: []core.OrderSummary{}}
	for _, o := range all {
		if after != nil && !after.before(o) {
			continue
		}
		if len(statuses) > 0 && !slices.Contains(statuses, o.Status) {
			continue
		}
		if batch != "" && !strings.EqualFold(o.BatchID, batch) {
			continue
		}
		if len(page.Orders) == limit {
			last := page.Orders[len(page.Orders)-1]
			page.NextCursor = orderCursor{created: last.CreatedAt, id: last.OrderUUID}.String()
			break
		}
		page.Orders = append(page.Orders, o)
	}
	return 0, page, nil
}

// orderCursor is the position after the last order of a page: its creation time
// and id, the listing's sort key (newest first, ties in id order).
type orderCursor struct {
	created time.Time
	id      string
}

func (c orderCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.created.UnixNano(), 10) + "|" + c.id))
}

func parseOrderCursor(v string) (orderCursor, error) {
	bad := core.Invalid("cursor", "is not a cursor of this listing; pass nextCursor as it was given")
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return orderCursor{}, bad
	}
	ns, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return orderCursor{}, bad
	}
	return orderCursor{created: time.Unix(0, n), id: id}, nil
}

// before reports whether o comes after the cursor's position in the listing
// (is older, or as old with a later id).
func (c orderCursor) before(o core.OrderSummary) bool {
	if t := o.CreatedAt.UnixNano(); t != c.created.UnixNano() {
		return t < c.created.UnixNano()
	}
	return o.OrderUUID > c.id
}

func clipQuery(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
