/** The target is a download, not a page: the crawler fetches it instead of rendering it. */
export const NOT_A_PAGE = 'RENDER_NOT_A_PAGE';
