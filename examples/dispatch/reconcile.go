// Package dispatch reconciles courier assignments every minute. Each
// reconcile run takes a per-region Redis lock so two replicas do not
// reassign the same deliveries.
package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

type Reconciler struct {
	rdb   *redis.Client
	owner string
}

func NewReconciler(addr, owner string) *Reconciler {
	return &Reconciler{rdb: redis.NewClient(&redis.Options{Addr: addr}), owner: owner}
}

// Run reconciles one region. The lock has no TTL (0 means "no expiry" in
// go-redis): a replica that dies mid-run blocks the region until someone
// deletes the key by hand.
func (r *Reconciler) Run(ctx context.Context, region string) error {
	key := fmt.Sprintf("lock:reconcile:%s", region)
	ok, err := r.rdb.SetNX(ctx, key, r.owner, 0).Result()
	if err != nil || !ok {
		return err
	}
	defer r.release(ctx, key)
	time.Sleep(time.Second) // stand-in for the reconcile work
	return nil
}

// release uses the compare-and-delete script: only the owner deletes the key.
func (r *Reconciler) release(ctx context.Context, key string) {
	releaseScript.Run(ctx, r.rdb, []string{key}, r.owner)
}

var releaseScript = redis.NewScript(`
if redis.call("get", KEYS[1]) == ARGV[1] then
	return redis.call("del", KEYS[1])
end
return 0`)
