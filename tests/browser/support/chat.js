// chat: driving the chat page the way a person does, shared by the browser tests.

/** Asks `question` in a new conversation on `origin`'s chat page; resolves to the new answer's element. */
export async function askInNewConversation(page, origin, question) {
  await page.goto(`${origin}/#/chat`);
  await page.getByRole('button', { name: '+ New conversation' }).click();
  await page.fill('#chat-input', question);
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').last();
  await turn.waitFor();
  return turn;
}
