package dispatch

// Courier earnings: every delivered order credits the courier's balance, and
// support can claw back a delivery that was disputed. Both run under a
// per-courier etcd mutex (clientv3/concurrency), which lives as long as its
// session's lease keeps being renewed.

import (
	"context"
	"database/sql"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

type Earnings struct {
	etcd *clientv3.Client
	db   *sql.DB
}

// CreditDelivery ignores the revision the lock was granted at. If this
// process stalls until its session expires, another replica takes the mutex
// and both UPDATEs land: the courier is paid twice.
func (e *Earnings) CreditDelivery(ctx context.Context, courierID string, cents int64) error {
	session, err := concurrency.NewSession(e.etcd, concurrency.WithTTL(10))
	if err != nil {
		return err
	}
	defer session.Close()
	m := concurrency.NewMutex(session, "/locks/courier-balance/"+courierID)
	if err := m.Lock(ctx); err != nil {
		return err
	}
	defer m.Unlock(ctx)
	_, err = e.db.ExecContext(ctx,
		"UPDATE courier_balances SET cents = cents + $1 WHERE courier_id = $2",
		cents, courierID)
	return err
}

// ClawBack passes the revision on: it grows with every grant, and the row
// only accepts a write carrying a higher one than it has already seen.
func (e *Earnings) ClawBack(ctx context.Context, courierID string, cents int64) error {
	session, err := concurrency.NewSession(e.etcd, concurrency.WithTTL(10))
	if err != nil {
		return err
	}
	defer session.Close()
	m := concurrency.NewMutex(session, "/locks/courier-balance/"+courierID)
	if err := m.Lock(ctx); err != nil {
		return err
	}
	defer m.Unlock(ctx)
	fence := m.Header().Revision
	_, err = e.db.ExecContext(ctx,
		"UPDATE courier_balances SET cents = cents - $1, fence = $2 WHERE courier_id = $3 AND fence < $2",
		cents, fence, courierID)
	return err
}
