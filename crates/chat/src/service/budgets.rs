//! Monthly token budgets (`chat.monthly_token_budget_workspace`, `…_user`): before a new
//! answer starts, the tokens used since the start of the calendar month (UTC) — input plus
//! output, summed from the stored usage — are compared with each configured budget; past one,
//! the answer is refused with [`BudgetExceeded`] (when it resets included). Answers already
//! running are never stopped: a budget can be overrun by the answers in flight when it ran out.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use chrono::{DateTime, Datelike, TimeZone, Utc};
use switchboard_core::Principal;
use switchboard_store::UsageFilter;

/// Whose budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetScope {
    Workspace,
    User,
}

impl BudgetScope {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetScope::Workspace => "workspace",
            BudgetScope::User => "user",
        }
    }
}

/// A monthly token budget that is used up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetExceeded {
    pub scope: BudgetScope,
    pub limit_tokens: u64,
    pub used_tokens: u64,
    pub period_start: DateTime<Utc>,
    pub resets_at: DateTime<Utc>,
}

impl std::fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let whose = match self.scope {
            BudgetScope::Workspace => "the workspace's",
            BudgetScope::User => "your",
        };
        write!(
            f,
            "{whose} monthly token budget of {} tokens is used up ({} used since {}); new \
             answers are refused until {}",
            self.limit_tokens,
            self.used_tokens,
            self.period_start.to_rfc3339(),
            self.resets_at.to_rfc3339()
        )
    }
}

impl std::error::Error for BudgetExceeded {}

impl ChatService {
    /// Refuses a new answer for `principal` when a configured budget is used up.
    pub(crate) async fn check_budgets(&self, principal: &Principal) -> ChatResult<()> {
        let config = &self.engine.config;
        let budgets = [
            (
                BudgetScope::Workspace,
                config.monthly_token_budget_workspace,
            ),
            (BudgetScope::User, config.monthly_token_budget_user),
        ];
        let now = Utc::now();
        let (period_start, resets_at) = month_of(now);
        for (scope, limit_tokens) in budgets {
            if limit_tokens == 0 {
                continue;
            }
            let filter = UsageFilter {
                owner_user_id: (scope == BudgetScope::User).then(|| principal.user_id.clone()),
                since: Some(period_start),
                ..UsageFilter::default()
            };
            let used_tokens: i64 = self
                .engine
                .store
                .usage_totals(&principal.workspace_id, &filter)
                .await?
                .iter()
                .map(|row| row.input_tokens + row.output_tokens)
                .sum();
            let used_tokens = u64::try_from(used_tokens).unwrap_or(0);
            if used_tokens >= limit_tokens {
                crate::metrics::budget_refusal(scope.as_str());
                return Err(ChatError::BudgetExceeded(Box::new(BudgetExceeded {
                    scope,
                    limit_tokens,
                    used_tokens,
                    period_start,
                    resets_at,
                })));
            }
        }
        Ok(())
    }
}

/// The first instant of `now`'s calendar month (UTC) and of the next one.
fn month_of(now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let start = |year: i32, month: u32| {
        Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0)
            .single()
            .unwrap_or(now)
    };
    let (next_year, next_month) = if now.month() == 12 {
        (now.year() + 1, 1)
    } else {
        (now.year(), now.month() + 1)
    };
    (start(now.year(), now.month()), start(next_year, next_month))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_runs_from_its_first_instant_to_the_next_months() {
        let now = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 59).unwrap();
        let (start, end) = month_of(now);
        assert_eq!(start, Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap());
        assert_eq!(end, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        let (start, end) = month_of(Utc.with_ymd_and_hms(2026, 2, 10, 8, 0, 0).unwrap());
        assert_eq!(start, Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap());
        assert_eq!(end, Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap());
    }
}
