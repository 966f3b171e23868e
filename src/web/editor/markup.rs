//! The editor's HTML (maud, escaped by default): the "New board" form of `/boards`, and the
//! tools above a board the user may change: edit mode, the pin picker, the board's settings,
//! the share dialog and the collaborators panel. Every form posts to this site and works
//! without the page script; buttons that need the script are `hidden` until it shows them.

use maud::{html, Markup};

use super::{board_path, Choice, Rights};
use crate::{
    pinboards::{collaborators::CollaboratorRecord, DESCRIPTION_CHARS},
    pins::TITLE_CHARS,
    store::Sharing,
};

/// Roles the collaborators panel offers, most powerful last.
const ROLES: [(&str, &str); 3] = [
    ("viewer", "Viewer: sees the board"),
    ("editor", "Editor: changes and shares it"),
    ("owner", "Owner: everything"),
];

/// `/boards`' "New board": a name and an optional description. Open at once when there is
/// no board yet.
pub(in crate::web) fn new_board_form(open: bool) -> String {
    html! {
        details.new-board.dialog open[open] {
            summary.button.primary { "New board" }
            div.panel {
                form.stack method="post" action="/boards" {
                    label { "Name"
                        input name="title" required maxlength=(TITLE_CHARS) autocomplete="off";
                    }
                    label { "Description " span.muted { "(optional)" }
                        textarea name="description" rows="3" maxlength=(DESCRIPTION_CHARS) {}
                    }
                    button.primary type="submit" { "Create board" }
                }
            }
        }
    }
    .into_string()
}

/// What the tools of one board page show.
pub(in crate::web) struct Tools<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub description: &'a str,
    /// The board's version as drawn (its `updated_at`).
    pub version: &'a str,
    pub sharing: Sharing,
    pub share_url: String,
    pub rights: Rights,
    /// `?edit=1`: the layout tools, the picker and the board's settings.
    pub editing: bool,
    /// `?share=1`: the share dialog open (where its forms come back to).
    pub share_open: bool,
    pub search: &'a str,
    pub choices: Vec<Choice>,
    pub collaborators: Vec<CollaboratorRecord>,
}

impl Tools<'_> {
    pub(in crate::web) fn render(&self) -> String {
        let path = board_path(self.id, "");
        html! {
            section #tools.tools data-board=(path) data-version=(self.version)
                data-editing[self.editing] aria-label="Board tools" {
                div.toolbar {
                    @if self.rights.edit {
                        @if self.editing {
                            a.button.primary href=(path) { "Done" }
                            span.hint { "Editing: drag a pin to move it and its corner to resize it; \
                                arrow keys move the focused pin, Shift+arrows resize it. \
                                Every change is saved at once." }
                        } @else {
                            a.button #edit-board href=(board_path(self.id, "?edit=1")) { "Edit board" }
                        }
                    }
                    @if self.rights.share || self.rights.invite {
                        (self.share_dialog(&path))
                    }
                }
                p #notice.notice role="alert" hidden {}
                @if self.editing && self.rights.edit {
                    div.panels {
                        details #add-pins.panel open {
                            summary { "Add pins" }
                            form.search method="get" action=(path) {
                                input type="hidden" name="edit" value="1";
                                input type="search" name="q" value=(self.search) maxlength="100"
                                    placeholder="Search by title or tag" aria-label="Search pins";
                                button type="submit" { "Search" }
                            }
                            div #picker { (picker_markup(self.id, self.version, &self.choices)) }
                        }
                        details #board-settings.panel {
                            summary { "Board settings" }
                            form.stack method="post" action=(format!("{path}/settings")) {
                                input type="hidden" name="version" value=(self.version);
                                label { "Name"
                                    input name="title" value=(self.title) required maxlength=(TITLE_CHARS);
                                }
                                label { "Description"
                                    textarea name="description" rows="3" maxlength=(DESCRIPTION_CHARS) { (self.description) }
                                }
                                button.primary type="submit" { "Save" }
                            }
                            form.stack.danger-zone method="post" action=(format!("{path}/delete")) {
                                input type="hidden" name="version" value=(self.version);
                                label.check {
                                    input type="checkbox" name="confirm" value="yes" required;
                                    span { "Yes, delete this board. Its pins stay in the workspace." }
                                }
                                button.danger type="submit" { "Delete board" }
                            }
                        }
                    }
                }
            }
        }
        .into_string()
    }

    fn share_dialog(&self, path: &str) -> Markup {
        let s = self.sharing;
        html! {
            details #share.dialog open[self.share_open] {
                summary.button { "Share" }
                div.panel {
                    @if self.rights.share {
                        h2 { "Sharing" }
                        form.stack method="post" action=(format!("{path}/share")) {
                            (check("is_public", s.is_public, "Public link", "Anyone with the link can view the board."))
                            (check("require_sign_in", s.require_sign_in, "Sign-in required", "The link opens only for people signed in to this Corkboard."))
                            (check("allow_edit", s.allow_edit, "Allow editing", "People the board is shared with may change it."))
                            (check("allow_comments", s.allow_comments, "Allow comments", "Viewers may comment on the board."))
                            button.primary type="submit" { "Save sharing" }
                        }
                        div.link {
                            label for="share-url" { "Share link" }
                            div.row {
                                input #share-url type="url" readonly value=(self.share_url);
                                button type="button" data-copy="share-url" hidden { "Copy" }
                            }
                        }
                    }
                    @if self.rights.invite {
                        h2 { "Collaborators" }
                        @if self.collaborators.is_empty() {
                            p.muted { "No collaborators yet: invite someone by email." }
                        } @else {
                            ul.people {
                                @for c in &self.collaborators {
                                    (collaborator(path, c))
                                }
                            }
                        }
                        form.invite method="post" action=(format!("{path}/collaborators")) {
                            input type="email" name="email" required maxlength="320"
                                placeholder="name@example.com" aria-label="Email";
                            (role_select(None))
                            button.primary type="submit" { "Invite" }
                        }
                    }
                }
            }
        }
    }
}

fn check(name: &str, on: bool, label: &str, help: &str) -> Markup {
    html! {
        label.check {
            input type="checkbox" name=(name) checked[on];
            span { strong { (label) } br; span.muted { (help) } }
        }
    }
}

fn role_select(current: Option<&str>) -> Markup {
    html! {
        select name="role" aria-label="Role" {
            @for (role, label) in ROLES {
                option value=(role) selected[current.map_or(role == "viewer", |c| c == role)] { (label) }
            }
            @if let Some(custom) = current.filter(|c| !ROLES.iter().any(|(r, _)| r == c)) {
                option value=(custom) selected { (custom) }
            }
        }
    }
}

fn collaborator(path: &str, c: &CollaboratorRecord) -> Markup {
    let user: String = url::form_urlencoded::byte_serialize(c.user_id.as_bytes()).collect();
    let at = format!("{path}/collaborators/{user}");
    html! {
        li data-user=(c.user_id) {
            span.who { (c.email.as_deref().unwrap_or(&c.user_id)) }
            form.role method="post" action=(at) {
                (role_select(Some(&c.role)))
                button type="submit" { "Change" }
            }
            form method="post" action=(format!("{at}/remove")) {
                button.plain type="submit" aria-label=(format!("Remove {}", c.email.as_deref().unwrap_or(&c.user_id))) { "Remove" }
            }
        }
    }
}

fn picker_markup(id: &str, version: &str, found: &[Choice]) -> Markup {
    let action = board_path(id, "/pins");
    html! {
        @if found.is_empty() {
            p.muted.empty { "No pins to add match this search." }
        } @else {
            ul.picks {
                @for c in found {
                    li data-pick=(c.id) {
                        div.what {
                            strong { @if c.title.is_empty() { "Untitled" } @else { (c.title) } }
                            span.type { (c.pin_type) }
                            @for tag in &c.tags { span.tag { (tag) } }
                        }
                        form method="post" action=(action) {
                            input type="hidden" name="pin_id" value=(c.id);
                            input type="hidden" name="version" value=(version);
                            button type="submit" aria-label=(format!("Add {}", if c.title.is_empty() { &c.pin_type } else { &c.title })) { "Add" }
                        }
                    }
                }
            }
        }
    }
}

/// The picker's list alone, as `GET /boards/{id}/picker` sends it.
pub(super) fn picker_list(id: &str, version: &str, found: &[Choice]) -> String {
    picker_markup(id, version, found).into_string()
}
