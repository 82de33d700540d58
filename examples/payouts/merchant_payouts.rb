# frozen_string_literal: true

# Merchant payouts: once a day the marketplace moves each merchant's settled
# sales into a payout and books it in the ledger. Several Sidekiq workers run
# the job; a Redlock (redlock-rb, three Redis masters) keeps them apart.

require "redlock"

class MerchantPayouts
  LOCK_TTL_MS = 30_000

  def initialize(redis_urls)
    @lock_manager = Redlock::Client.new(redis_urls, retry_count: 3, retry_delay: 200)
  end

  # Redlock gives no fencing token: a worker paused past the TTL (GC, a slow
  # query) and a worker that took over both book the same payout.
  def book_payout(merchant_id, day)
    @lock_manager.lock!("ledger:merchant:#{merchant_id}", LOCK_TTL_MS) do
      cents = Sale.settled.where(merchant_id: merchant_id, day: day).sum(:net_cents)
      LedgerEntry.create!(merchant_id: merchant_id, day: day, kind: "payout", cents: -cents)
      Payout.create!(merchant_id: merchant_id, day: day, cents: cents)
    end
  end

  # The same Redlock is fine here: the statement PDF is cached, and two workers
  # rendering it at once only waste a little CPU.
  def warm_statement(merchant_id, month)
    @lock_manager.lock("lock:statement:#{merchant_id}:#{month}", LOCK_TTL_MS) do |locked|
      next unless locked

      Rails.cache.write("statement:#{merchant_id}:#{month}", StatementRenderer.render(merchant_id, month), expires_in: 3600)
    end
  end
end
