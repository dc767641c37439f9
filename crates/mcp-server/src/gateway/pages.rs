//! Pagination of the gateway's lists (`tools/list`, `resources/list`,
//! `resources/templates/list`, `prompts/list`): pages of `[kg] gateway_page_size` items,
//! `nextCursor` on every page but the last. A cursor is the list's name and the offset of its
//! page (`tools:100`); a client treats it as opaque. One that is not ours, or another list's,
//! is JSON-RPC -32602. A list that shrank between pages ends early rather than failing.
//! [`paged`] is the one way every list handler answers: a page as rmcp's list result.

use rmcp::ErrorData;
use rmcp::model::{
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool,
};

/// Default of `[kg] gateway_page_size`.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// One page of a list, and the cursor of the next one.
#[derive(Debug, PartialEq)]
pub(super) struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

/// The page of `items` (all of `list`'s) that `cursor` names (none: the first).
pub(super) fn page_of<T>(
    list: &str,
    items: Vec<T>,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<Page<T>, ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => offset_of(list, cursor).ok_or_else(|| {
            ErrorData::invalid_params(format!("invalid cursor for {list}/list: {cursor:?}"), None)
        })?,
    };
    let page_size = page_size.max(1);
    let end = start.saturating_add(page_size).min(items.len());
    let next_cursor = (end < items.len()).then(|| format!("{list}:{end}"));
    let items = items
        .into_iter()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect();
    Ok(Page { items, next_cursor })
}

/// The page of `items` (all of `list`'s) that `params` name, as rmcp's list result `T`: only
/// the page's items are made `T`'s by `convert`. Every gateway list answers through this.
pub(super) fn paged<T: PagedList, I>(
    list: &str,
    items: Vec<I>,
    params: Option<PaginatedRequestParams>,
    page_size: usize,
    convert: impl FnMut(I) -> Result<T::Item, ErrorData>,
) -> Result<T, ErrorData> {
    let cursor = params.and_then(|params| params.cursor);
    let page = page_of(list, items, cursor.as_deref(), page_size)?;
    let items = page
        .items
        .into_iter()
        .map(convert)
        .collect::<Result<Vec<T::Item>, ErrorData>>()?;
    Ok(T::of_page(items, page.next_cursor))
}

/// An rmcp list result made of one page of its items.
pub(super) trait PagedList {
    type Item;
    fn of_page(items: Vec<Self::Item>, next_cursor: Option<String>) -> Self;
}

macro_rules! paged_list {
    ($result:ident, $item:ty) => {
        impl PagedList for $result {
            type Item = $item;
            fn of_page(items: Vec<$item>, next_cursor: Option<String>) -> Self {
                let mut result = $result::with_all_items(items);
                result.next_cursor = next_cursor;
                result
            }
        }
    };
}

paged_list!(ListToolsResult, Tool);
paged_list!(ListResourcesResult, Resource);
paged_list!(ListResourceTemplatesResult, ResourceTemplate);
paged_list!(ListPromptsResult, Prompt);

fn offset_of(list: &str, cursor: &str) -> Option<usize> {
    let offset = cursor.strip_prefix(list)?.strip_prefix(':')?;
    if offset.is_empty() || !offset.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    offset.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_their_cursors_to_the_end() {
        let items: Vec<u32> = (0..5).collect();
        let first = page_of("tools", items.clone(), None, 2).unwrap();
        assert_eq!(first.items, [0, 1]);
        assert_eq!(first.next_cursor.as_deref(), Some("tools:2"));
        let second = page_of("tools", items.clone(), Some("tools:2"), 2).unwrap();
        assert_eq!(second.items, [2, 3]);
        let last = page_of("tools", items.clone(), Some("tools:4"), 2).unwrap();
        assert_eq!(last.items, [4]);
        assert_eq!(last.next_cursor, None);
        let shrunk = page_of("tools", items, Some("tools:9"), 2).unwrap();
        assert!(shrunk.items.is_empty() && shrunk.next_cursor.is_none());
    }

    #[test]
    fn a_cursor_not_ours_is_invalid_params() {
        for cursor in [
            "",
            "tools",
            "tools:",
            "tools:-1",
            "tools:x",
            "prompts:2",
            "2",
        ] {
            let error = page_of("tools", vec![1], Some(cursor), 2).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
    }
}
