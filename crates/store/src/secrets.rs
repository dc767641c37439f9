//! Secrets at rest: AES-256-GCM with a random 96-bit nonce per value.
//!
//! The key comes from `SWITCHBOARD_ENCRYPTION_KEY` (32 bytes as base64 or hex) or from a key
//! file generated on first start in the data dir (mode 0600). Sealed values are
//! `version byte (1) ‖ nonce (12) ‖ ciphertext+tag`, and each is bound to its row through the
//! associated data, so a ciphertext copied onto another row (or workspace) does not decrypt.
//! This module never logs or prints a key or a plaintext; `Debug` shows `[REDACTED]`.

use crate::error::StoreError;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use rand::RngCore;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Environment variable holding the 32-byte key (base64 or hex).
pub const ENCRYPTION_KEY_ENV: &str = "SWITCHBOARD_ENCRYPTION_KEY";
/// File name of the generated key inside the data dir.
pub const KEY_FILE_NAME: &str = "encryption.key";

const FORMAT_VERSION: u8 = 1;
const NONCE_LENGTH: usize = 12;

/// Where the active key came from (for a start-up log line; never the key itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    Environment,
    ExistingKeyFile(PathBuf),
    GeneratedKeyFile(PathBuf),
}

/// Encrypts and decrypts secret values with one AES-256-GCM key. Cheap to clone.
#[derive(Clone)]
pub struct SecretCipher {
    cipher: Aes256Gcm,
}

impl fmt::Debug for SecretCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretCipher { key: [REDACTED] }")
    }
}

impl SecretCipher {
    pub fn from_key_bytes(key: [u8; 32]) -> Self {
        Self {
            cipher: Aes256Gcm::new(&key.into()),
        }
    }

    /// Parses a key written as 64 hex digits or as base64 (standard or URL-safe, padded or not).
    pub fn from_key_text(text: &str) -> Result<Self, StoreError> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit()) {
            hex::decode(text).map_err(|error| StoreError::Crypto(error.to_string()))?
        } else {
            decode_base64(text).ok_or_else(|| {
                StoreError::Crypto(format!(
                    "{ENCRYPTION_KEY_ENV} must be 32 bytes written as 64 hex digits or base64"
                ))
            })?
        };
        let key: [u8; 32] = bytes.try_into().map_err(|bytes: Vec<u8>| {
            StoreError::Crypto(format!(
                "{ENCRYPTION_KEY_ENV} must be 32 bytes, got {} bytes",
                bytes.len()
            ))
        })?;
        Ok(Self::from_key_bytes(key))
    }

    /// A fresh random key held only in memory (tests, throwaway stores).
    pub fn generate() -> Self {
        Self::from_key_bytes(random_key())
    }

    /// Reads the key file at `path`, creating it (mode 0600, base64 text) when absent.
    pub fn load_or_create_key_file(path: &Path) -> Result<(Self, KeySource), StoreError> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                warn_if_readable_by_others(path);
                let cipher = Self::from_key_text(&text).map_err(|error| {
                    StoreError::Crypto(format!("key file {}: {error}", path.display()))
                })?;
                Ok((cipher, KeySource::ExistingKeyFile(path.to_owned())))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let key = random_key();
                match write_new_key_file(path, &key) {
                    Ok(()) => Ok((
                        Self::from_key_bytes(key),
                        KeySource::GeneratedKeyFile(path.to_owned()),
                    )),
                    // Another process created it between our read and our write: use theirs.
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        Self::load_or_create_key_file(path)
                    }
                    Err(source) => Err(StoreError::Io {
                        path: path.to_owned(),
                        source,
                    }),
                }
            }
            Err(source) => Err(StoreError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// The key the service runs with: `explicit_key` (the value of [`ENCRYPTION_KEY_ENV`]) when
    /// given, else `<data_dir>/encryption.key`, generated on first use.
    pub fn resolve(
        explicit_key: Option<&str>,
        data_dir: &Path,
    ) -> Result<(Self, KeySource), StoreError> {
        match explicit_key {
            Some(text) => Ok((Self::from_key_text(text)?, KeySource::Environment)),
            None => {
                std::fs::create_dir_all(data_dir).map_err(|source| StoreError::Io {
                    path: data_dir.to_owned(),
                    source,
                })?;
                Self::load_or_create_key_file(&data_dir.join(KEY_FILE_NAME))
            }
        }
    }

    /// Seals `plaintext`; `associated_data` names the row it belongs to and must be given
    /// again to open it.
    pub fn encrypt(&self, plaintext: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, StoreError> {
        let mut nonce = [0u8; NONCE_LENGTH];
        rand::rng().fill_bytes(&mut nonce);
        let ciphertext = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: associated_data,
                },
            )
            .map_err(|_| StoreError::Crypto("encryption failed".to_owned()))?;
        let mut sealed = Vec::with_capacity(1 + NONCE_LENGTH + ciphertext.len());
        sealed.push(FORMAT_VERSION);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        Ok(sealed)
    }

    /// Opens a value sealed by [`SecretCipher::encrypt`] with the same associated data.
    pub fn decrypt(&self, sealed: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, StoreError> {
        let (version, rest) = sealed
            .split_first()
            .ok_or_else(|| StoreError::Crypto("sealed value is empty".to_owned()))?;
        if *version != FORMAT_VERSION {
            return Err(StoreError::Crypto(format!(
                "sealed value has unknown format version {version}"
            )));
        }
        if rest.len() < NONCE_LENGTH {
            return Err(StoreError::Crypto("sealed value is truncated".to_owned()));
        }
        let (nonce, ciphertext) = rest.split_at(NONCE_LENGTH);
        self.cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: associated_data,
                },
            )
            .map_err(|_| {
                StoreError::Crypto(
                    "cannot decrypt a stored secret: wrong encryption key or corrupted value"
                        .to_owned(),
                )
            })
    }
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    rand::rng().fill_bytes(&mut key);
    key
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

fn write_new_key_file(path: &Path, key: &[u8; 32]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let text = base64::engine::general_purpose::STANDARD.encode(key);
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    tracing::info!(path = %path.display(), "generated a new encryption key file");
    Ok(())
}

fn warn_if_readable_by_others(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(metadata) = std::fs::metadata(path) {
            let mode = metadata.permissions().mode();
            if mode & 0o077 != 0 {
                tracing::warn!(
                    path = %path.display(),
                    mode = format!("{:o}", mode & 0o777),
                    "encryption key file is readable by other users; chmod 600 it"
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_binds_to_associated_data() {
        let cipher = SecretCipher::generate();
        let sealed = cipher.encrypt(b"sk-live-123", b"row-1").unwrap();
        assert!(!sealed.windows(11).any(|window| window == b"sk-live-123"));
        assert_eq!(cipher.decrypt(&sealed, b"row-1").unwrap(), b"sk-live-123");
        assert!(cipher.decrypt(&sealed, b"row-2").is_err());
        assert!(SecretCipher::generate().decrypt(&sealed, b"row-1").is_err());
    }

    #[test]
    fn nonces_differ_per_value() {
        let cipher = SecretCipher::generate();
        let first = cipher.encrypt(b"same", b"aad").unwrap();
        let second = cipher.encrypt(b"same", b"aad").unwrap();
        assert_ne!(first, second);
    }

    #[test]
    fn key_text_accepts_hex_and_base64_and_rejects_short_keys() {
        let key = [7u8; 32];
        let hex_text = hex::encode(key);
        let base64_text = base64::engine::general_purpose::STANDARD.encode(key);
        let sealed = SecretCipher::from_key_text(&hex_text)
            .unwrap()
            .encrypt(b"x", b"")
            .unwrap();
        let opened = SecretCipher::from_key_text(&base64_text)
            .unwrap()
            .decrypt(&sealed, b"")
            .unwrap();
        assert_eq!(opened, b"x");
        let error = SecretCipher::from_key_text("c2hvcnQ=").unwrap_err();
        assert!(error.to_string().contains("32 bytes"), "{error}");
    }

    #[test]
    fn key_file_is_created_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let (first, source) = SecretCipher::resolve(None, dir.path()).unwrap();
        assert!(matches!(source, KeySource::GeneratedKeyFile(_)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let sealed = first.encrypt(b"value", b"aad").unwrap();
        let (second, source) = SecretCipher::resolve(None, dir.path()).unwrap();
        assert!(matches!(source, KeySource::ExistingKeyFile(_)));
        assert_eq!(second.decrypt(&sealed, b"aad").unwrap(), b"value");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let debug = format!("{:?}", SecretCipher::from_key_bytes([0x41; 32]));
        assert_eq!(debug, "SecretCipher { key: [REDACTED] }");
    }
}
