//! Who is calling `/mcp`: bearer tokens are verified through a [`TokenVerifier`] (the store, in
//! the product) behind a short-lived cache, and requests without a token may get configured
//! anonymous scopes. The result is a [`Caller`], put into the request's extensions for the
//! MCP handler, the rate limiter and session binding.
//!
//! A cached verdict is trusted only while the verifier's revocation epoch has not moved (the
//! store moves it on every revocation, in this process at once and from other replicas through
//! PostgreSQL): a revoked token is refused at its next request, not after the cache lifetime.
//!
//! Tokens are kept in memory only as keys of that cache, for `token_cache_secs`; everything
//! that outlives a request (rate-limit buckets, session owners) keys on SHA-256 of the token,
//! computed once per verification.

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::{Principal, ScopeSet, UserId, WorkspaceId};

/// Resolves a bearer token to the principal it belongs to.
#[async_trait]
pub trait TokenVerifier: Send + Sync + 'static {
    /// `Ok(None)` for an unknown, revoked or expired token.
    async fn verify(&self, token: &str) -> Result<Option<Principal>, VerifyError>;

    /// A number that moves whenever a verified token may have stopped working; cached
    /// verdicts from an older epoch are verified again. Cheap: read on every request.
    fn revocation_epoch(&self) -> u64 {
        0
    }
}

/// The verifier could not answer (database down…): the request fails with 503, not 401.
#[derive(Debug, Clone, thiserror::Error)]
#[error("token verification failed: {0}")]
pub struct VerifyError(pub String);

/// Identifies a caller for rate limiting and session binding without holding its secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallerKey {
    /// SHA-256 of the bearer token.
    Token([u8; 32]),
    /// Requests without a token, granted the anonymous scopes.
    Anonymous,
}

impl CallerKey {
    pub fn for_token(token: &str) -> Self {
        CallerKey::Token(Sha256::digest(token.as_bytes()).into())
    }
}

/// The authenticated caller of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub principal: Principal,
    pub key: CallerKey,
}

/// How requests without a token are treated.
#[derive(Clone, Debug)]
pub enum AnonymousAccess {
    /// 401 with a `WWW-Authenticate` challenge.
    Refused,
    /// Served as this principal (default workspace, configured scopes).
    Granted(Principal),
}

impl AnonymousAccess {
    /// Grants `scopes` in `workspace_id`, or refuses when `scopes` is empty.
    pub fn from_scopes(scopes: ScopeSet, workspace_id: WorkspaceId) -> Self {
        if scopes.is_empty() {
            AnonymousAccess::Refused
        } else {
            AnonymousAccess::Granted(Principal {
                workspace_id,
                user_id: UserId::from_string("anonymous"),
                token_id: None,
                scopes,
            })
        }
    }
}

/// The outcome of authenticating one request.
#[derive(Debug)]
pub enum Authentication {
    Accepted(Arc<Caller>),
    /// No `Authorization` header and anonymous access is refused.
    Missing,
    /// A header that is not `Bearer <token>`, or a token the verifier does not know.
    Invalid,
    Unavailable(VerifyError),
}

struct CachedVerdict {
    caller: Option<Arc<Caller>>,
    expires_at: Instant,
    /// The verifier's revocation epoch read before verifying.
    epoch: u64,
}

/// Authenticates requests: verifier + cache + anonymous policy.
pub struct Authenticator {
    verifier: Arc<dyn TokenVerifier>,
    anonymous: Option<Arc<Caller>>,
    lifetime: Duration,
    cache: Mutex<HashMap<Box<str>, CachedVerdict>>,
}

/// Unknown tokens are remembered only briefly, so a token created a moment later works.
const NEGATIVE_CACHE_LIFETIME: Duration = Duration::from_secs(2);
/// Longer bearer values are refused without asking the verifier (ours are ~50 bytes); this
/// also bounds what an attacker can make the cache hold.
const MAX_TOKEN_BYTES: usize = 512;
/// Past this many entries, expired ones are swept on insert.
const CACHE_SWEEP_THRESHOLD: usize = 10_000;

impl Authenticator {
    pub fn new(
        verifier: Arc<dyn TokenVerifier>,
        anonymous: AnonymousAccess,
        cache_lifetime: Duration,
    ) -> Self {
        let anonymous = match anonymous {
            AnonymousAccess::Refused => None,
            AnonymousAccess::Granted(principal) => Some(Arc::new(Caller {
                principal,
                key: CallerKey::Anonymous,
            })),
        };
        Self {
            verifier,
            anonymous,
            lifetime: cache_lifetime,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Authenticates from the raw `Authorization` header value (if any).
    pub async fn authenticate(&self, authorization: Option<&[u8]>) -> Authentication {
        let Some(header) = authorization else {
            return match &self.anonymous {
                Some(caller) => Authentication::Accepted(caller.clone()),
                None => Authentication::Missing,
            };
        };
        let Some(token) = bearer_token(header).filter(|token| token.len() <= MAX_TOKEN_BYTES)
        else {
            return Authentication::Invalid;
        };
        let now = Instant::now();
        // Read before verifying: a revocation racing the verification leaves the verdict stale.
        let epoch = self.verifier.revocation_epoch();
        if let Some(verdict) = self.cache.lock().expect("auth cache lock").get(token)
            && verdict.expires_at > now
            && verdict.epoch == epoch
        {
            return match &verdict.caller {
                Some(caller) => Authentication::Accepted(caller.clone()),
                None => Authentication::Invalid,
            };
        }
        let principal = match self.verifier.verify(token).await {
            Ok(principal) => principal,
            Err(error) => return Authentication::Unavailable(error),
        };
        let caller = principal.map(|principal| {
            Arc::new(Caller {
                principal,
                key: CallerKey::for_token(token),
            })
        });
        let lifetime = if caller.is_some() {
            self.lifetime
        } else {
            NEGATIVE_CACHE_LIFETIME
        };
        let mut cache = self.cache.lock().expect("auth cache lock");
        if cache.len() >= CACHE_SWEEP_THRESHOLD {
            cache.retain(|_, verdict| verdict.expires_at > now && verdict.epoch == epoch);
        }
        cache.insert(
            Box::from(token),
            CachedVerdict {
                caller: caller.clone(),
                expires_at: now + lifetime,
                epoch,
            },
        );
        match caller {
            Some(caller) => Authentication::Accepted(caller),
            None => Authentication::Invalid,
        }
    }
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("anonymous", &self.anonymous.is_some())
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

/// The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive).
pub fn bearer_token(header: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(header).ok()?.trim();
    let (scheme, token) = text.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A fixed token → principal table, for tests, benchmarks and the conformance fixture.
#[derive(Debug, Default, Clone)]
pub struct StaticTokens {
    tokens: HashMap<String, Principal>,
}

impl StaticTokens {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, token: &str, principal: Principal) -> Self {
        self.tokens.insert(token.to_owned(), principal);
        self
    }
}

#[async_trait]
impl TokenVerifier for StaticTokens {
    async fn verify(&self, token: &str) -> Result<Option<Principal>, VerifyError> {
        Ok(self.tokens.get(token).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct CountingVerifier {
        inner: StaticTokens,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl TokenVerifier for CountingVerifier {
        async fn verify(&self, token: &str) -> Result<Option<Principal>, VerifyError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.inner.verify(token).await
        }
    }

    fn principal() -> Principal {
        Principal {
            workspace_id: WorkspaceId::from_string("ws"),
            user_id: UserId::from_string("u"),
            token_id: None,
            scopes: ScopeSet::parse_list("schema:read").unwrap(),
        }
    }

    #[tokio::test]
    async fn verified_tokens_are_cached_and_bad_headers_refused() {
        let verifier = Arc::new(CountingVerifier {
            inner: StaticTokens::new().with("good", principal()),
            calls: AtomicUsize::new(0),
        });
        let auth = Authenticator::new(
            verifier.clone(),
            AnonymousAccess::Refused,
            Duration::from_secs(60),
        );
        for _ in 0..3 {
            assert!(matches!(
                auth.authenticate(Some(b"Bearer good")).await,
                Authentication::Accepted(_)
            ));
        }
        assert_eq!(verifier.calls.load(Ordering::SeqCst), 1);
        assert!(matches!(
            auth.authenticate(Some(b"Bearer bad")).await,
            Authentication::Invalid
        ));
        assert!(matches!(
            auth.authenticate(Some(b"Basic Zm9vOmJhcg==")).await,
            Authentication::Invalid
        ));
        assert!(matches!(
            auth.authenticate(None).await,
            Authentication::Missing
        ));
        let huge = format!("Bearer {}", "x".repeat(MAX_TOKEN_BYTES + 1));
        assert!(matches!(
            auth.authenticate(Some(huge.as_bytes())).await,
            Authentication::Invalid
        ));
        assert_eq!(
            verifier.calls.load(Ordering::SeqCst),
            2,
            "oversized tokens never reach the verifier"
        );
    }

    #[tokio::test]
    async fn anonymous_scopes_apply_only_without_a_header() {
        let scopes = ScopeSet::parse_list("schema:read").unwrap();
        let access = AnonymousAccess::from_scopes(scopes, WorkspaceId::from_string("default"));
        let auth = Authenticator::new(
            Arc::new(StaticTokens::new()),
            access,
            Duration::from_secs(60),
        );
        let Authentication::Accepted(caller) = auth.authenticate(None).await else {
            panic!("anonymous")
        };
        assert_eq!(caller.key, CallerKey::Anonymous);
        assert!(matches!(
            auth.authenticate(Some(b"Bearer nope")).await,
            Authentication::Invalid
        ));
    }
}
